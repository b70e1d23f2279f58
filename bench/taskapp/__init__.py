"""A bench-only Django app: tasks that wait, as most real ones do (``bench/tasks.py``'s
shifts). Installed only by ``bench/tasks_settings.py``, never by the package or the sample."""
