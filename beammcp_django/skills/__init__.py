"""The skills extension's Django side: skills found in each installed app's ``skills/``
folder (``folders.py``), the way Django finds templates, and the site's skills assembled from
those folders and the ``Skill`` classes a host registers (``assembly.py``). The wire is the
core's (``protocol/skills.py``, ``protocol/methods/skills.py``)."""
