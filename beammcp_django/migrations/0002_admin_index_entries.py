"""The admin index's entries for the catalog and the connectome: proxy models of
``ObservedEdge``, so no table and (``default_permissions = ()``) no permission rows."""

from django.db import migrations


def index_entry(name: str, verbose_name: str) -> migrations.CreateModel:
    return migrations.CreateModel(
        name=name,
        fields=[],
        options={
            "verbose_name": verbose_name,
            "verbose_name_plural": verbose_name,
            "proxy": True,
            "default_permissions": (),
            "indexes": [],
            "constraints": [],
        },
        bases=("beammcp_django.observededge",),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("beammcp_django", "0001_observed_edge"),
    ]

    operations = [
        index_entry("Connectome", "connectome"),
        index_entry("McpCatalog", "MCP catalog"),
    ]
