"""The process's servers, built from settings, and what they are handed: the server itself
(``factory``, shared by the process in ``process``), the HTTP endpoint's policy
(``http_settings``), how host code is called (``host_threads``, ``async_orm``), what clients
bring back signed (``signing``), where sessions live (``session_cache``), and the database as
a shared part (``database_outages``)."""
