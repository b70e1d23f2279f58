"""The sans-IO protocol core: no Django, no sockets, no files. Driven with dicts and bytes."""
