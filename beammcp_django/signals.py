"""Signals the package sends, for hosts that want to act on them.

``observed_flushed``: a process wrote its observed counts to the merged store. Sent with
``node`` (the process's id in the store) and ``edges`` (how many rows changed). A host can,
for instance, export the diff whenever the picture changes.
"""

from django.dispatch import Signal

observed_flushed = Signal()
