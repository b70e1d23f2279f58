const note = "<!-- a comment opener -->";
