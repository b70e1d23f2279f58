"""The 2025-11-25 era over HTTP: its sessions and what they carry. What a session is and the
store in this process (``store``), the store every worker shares in Redis (``shared``), the
answers and ends carried between workers (``relay``), a session's requests (``legacy_http``),
its GET stream (``stream``) and its call streams outliving their connections
(``resumable``)."""
