"""One row per principal with tasks (``McpTaskOwner``): the lock its task-making calls take
in turn, and when its tasks were last served."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("beammcp_django", "0003_task"),
    ]

    operations = [
        migrations.CreateModel(
            name="McpTaskOwner",
            fields=[
                ("owner", models.CharField(max_length=255, primary_key=True, serialize=False)),
                ("locked_at", models.DateTimeField()),
                ("served_at", models.DateTimeField(null=True)),
            ],
            options={
                "verbose_name": "MCP task owner",
                "default_permissions": (),
            },
        ),
    ]
