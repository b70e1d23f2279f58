"""The system check of MCP Apps' views that only the Django layer can make: each
``UiResource``'s template found, the static files it inlines found, and no literal load
from an origin its ``csp`` does not declare (``ui/csp_scan.py``). The view's and its tools'
declarations themselves are the catalog audit's (``beammcp.E031``, ``E032``)."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, register
from django.template import TemplateDoesNotExist, TemplateSyntaxError
from django.template.loader import get_template

from beammcp_django.checks.ids import check_id
from beammcp_django.conf import load_catalog
from beammcp_django.ui.csp_scan import VIEW_TEMPLATE, inline_problems, undeclared_loads
from beammcp_django.ui.declaration import UiResource


@register("beammcp")
def check_views(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    try:
        declarations = getattr(load_catalog(), "declarations", ())
    except Exception:
        return []  # an unloadable catalog is check_catalog's to report
    messages: list[CheckMessage] = []
    for declaration in declarations:
        if not issubclass(declaration, UiResource) or not hasattr(declaration, "template_name"):
            continue
        subject = f"view {getattr(declaration, 'uri', declaration.__qualname__)}"
        for problem, hint in _problems(declaration):
            messages.append(
                Error(f"{subject}: {problem}", hint=hint, obj=subject, id=check_id(VIEW_TEMPLATE))
            )
    return messages


_LOADS_HINT = (
    "Inline the asset ({% inline_script %}, {% inline_style %}), or declare its origin in the "
    "view's csp."
)
_PARTS_HINT = "Add the template or static file, or correct its name."


def _problems(declaration: type[UiResource]) -> list[tuple[str, str]]:
    try:
        get_template(declaration.template_name)
    except TemplateDoesNotExist:
        return [(f"its template '{declaration.template_name}' does not exist", _PARTS_HINT)]
    except TemplateSyntaxError as error:
        return [(f"its template is not valid: {str(error).splitlines()[0]}", _PARTS_HINT)]
    return [
        *((problem, _PARTS_HINT) for problem in inline_problems(declaration.template_name)),
        *(
            (str(load), _LOADS_HINT)
            for load in undeclared_loads(declaration.template_name, declaration.csp)
        ),
    ]
