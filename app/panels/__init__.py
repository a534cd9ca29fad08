"""Dashboard panels shared by several pages, each in its own module (charts and layout
of one kind of evaluation); pages call them with one line."""
