"""How the package meets Django while it serves: host code called on worker threads under a
deadline (``host_threads``), the ORM's connections tidied around async host code
(``async_orm``), and the project's database as a part shared with other processes
(``database_outages``). Below every feature that calls host code or the database."""
