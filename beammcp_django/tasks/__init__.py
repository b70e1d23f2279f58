"""The tasks extension's Django side: the tasks in the database (``store``), the Tasks
framework that runs them (``backend``), the core's runner (``runner``) and one run in a
worker (``worker``, ``shift``). The extension's wire is the core's ``protocol/task_wire.py``.
"""
