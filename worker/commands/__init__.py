"""The spherescope subcommands: one module each, registered in ``worker.cli.COMMANDS``.

A command module declares ``register(commands)``: it adds its subparser(s) with
``subcommand(...)`` and sets ``handler`` (``args -> exit code``) as the parser's default.
"""
