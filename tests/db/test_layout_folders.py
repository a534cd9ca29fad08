"""``remove_empty_folders`` and ``ensure_folder``: what a remote writer leaves on its
side once the stack holds its run, and a folder made while another process prunes."""

from __future__ import annotations

from pathlib import Path

from db import layout


def test_empty_folders_go_up_to_the_home_and_a_held_one_stops_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run = layout.ensure_folder(home / "runs" / "a")
    layout.ensure_folder(home / "spool")
    (home / "spool" / "batches.jsonl").write_text("{}\n")
    layout.remove_empty_folders(run, home)
    assert sorted(p.name for p in home.iterdir()) == ["spool"] and home.is_dir()
    layout.remove_empty_folders(home / "spool", home)  # holds a file: kept
    assert (home / "spool" / "batches.jsonl").is_file()


def test_a_folder_outside_the_home_is_never_removed(tmp_path: Path) -> None:
    elsewhere = layout.ensure_folder(tmp_path / "elsewhere")
    layout.remove_empty_folders(elsewhere, tmp_path / "home")
    assert elsewhere.is_dir()


def test_ensure_folder_makes_it_even_when_a_parent_goes_meanwhile(tmp_path, monkeypatch):
    target = tmp_path / "home" / "runs" / "a"
    real_mkdir, raced = Path.mkdir, []

    def mkdir(self: Path, *args, **kwargs) -> None:
        if self == target and not raced:  # the parent removed just before the leaf's mkdir
            raced.append(True)
            raise FileNotFoundError(str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    assert layout.ensure_folder(target).is_dir() and raced
