"""Channels' Redis layer with a slow ``group_add``, so a test can hold the moment between a
listen stream's acknowledgment and its joining the group open long enough to publish in it."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from channels_redis.core import RedisChannelLayer


class SlowJoinRedisChannelLayer(RedisChannelLayer):
    async def group_add(self, group: str, channel: str) -> Any:
        await asyncio.sleep(float(os.environ["BEAMMCP_TEST_GROUP_ADD_DELAY"]))
        return await super().group_add(group, channel)
