"""A server built from settings (``factory``), and what it is handed: the HTTP endpoint's
policy (``http_settings``), what clients bring back signed (``signing``), and where sessions
live (``session_cache``). The process's shared servers, which add the task runner, are
``beammcp_django.process``, above the tasks extension whose worker builds its own here."""
