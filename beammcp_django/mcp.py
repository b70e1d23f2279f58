"""What a host imports to declare its catalog: ``from beammcp_django import mcp``.

from beammcp_django import mcp

@mcp.site.register
class Echo(mcp.Tool):
    name = "echo"
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}},
                    "required": ["text"], "additionalProperties": False}

    def call(self, arguments, context):
        return arguments["text"]
"""

from beammcp_django.connectome.resources import CONNECTOME_RESOURCES
from beammcp_django.handles.kinds import HandleKind
from beammcp_django.protocol import content, inputs
from beammcp_django.protocol.catalog import (
    Completion,
    InputRequired,
    PromptArgument,
    PromptResult,
    PromptSpec,
    ResourceMatch,
    ResourceSpec,
    ResourceTemplateSpec,
    ToolAnnotations,
    ToolResult,
    ToolSpec,
)
from beammcp_django.protocol.context import RequestContext
from beammcp_django.protocol.errors import ProtocolError, ResourceNotFound, ToolError
from beammcp_django.protocol.skills import SkillSpec
from beammcp_django.registry import Prompt, Resource, ResourceTemplate, Site, Skill, Tool, site
from beammcp_django.ui.declaration import UiResource

__all__ = [
    "CONNECTOME_RESOURCES",
    "Completion",
    "HandleKind",
    "InputRequired",
    "Prompt",
    "PromptArgument",
    "PromptResult",
    "PromptSpec",
    "ProtocolError",
    "RequestContext",
    "Resource",
    "ResourceMatch",
    "ResourceNotFound",
    "ResourceSpec",
    "ResourceTemplate",
    "ResourceTemplateSpec",
    "Site",
    "Skill",
    "SkillSpec",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "UiResource",
    "content",
    "inputs",
    "site",
]
