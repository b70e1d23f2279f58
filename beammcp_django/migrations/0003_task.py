"""The tasks extension's store: one row a task (beammcp_django.tasks.store)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("beammcp_django", "0002_admin_index_entries"),
    ]

    operations = [
        migrations.CreateModel(
            name="McpTask",
            fields=[
                ("task_id", models.CharField(max_length=64, primary_key=True, serialize=False)),
                (
                    "owner",
                    models.CharField(
                        help_text="the key of the principal that made it", max_length=255
                    ),
                ),
                ("tool", models.CharField(max_length=128)),
                ("arguments", models.JSONField(help_text="what the worker calls the tool with")),
                ("scopes", models.JSONField(null=True)),
                ("client_capabilities", models.JSONField(default=dict)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("working", "working"),
                            ("input_required", "input required"),
                            ("completed", "completed"),
                            ("failed", "failed"),
                            ("cancelled", "cancelled"),
                        ],
                        max_length=16,
                    ),
                ),
                ("status_message", models.TextField(blank=True, default="")),
                ("created_at", models.DateTimeField()),
                ("updated_at", models.DateTimeField()),
                (
                    "ttl_ms",
                    models.PositiveBigIntegerField(help_text="null: kept until purged", null=True),
                ),
                ("expires_at", models.DateTimeField(null=True)),
                ("poll_interval_ms", models.PositiveIntegerField()),
                ("result", models.JSONField(null=True)),
                ("error", models.JSONField(null=True)),
                ("input_requests", models.JSONField(default=dict)),
                ("input_responses", models.JSONField(default=dict)),
                ("issued_keys", models.JSONField(default=list)),
                ("request_state", models.JSONField(null=True)),
                ("cancel_requested", models.BooleanField(default=False)),
                ("lease_until", models.DateTimeField(null=True)),
                ("attempts", models.PositiveIntegerField(default=0)),
            ],
            options={
                "verbose_name": "MCP task",
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(fields=["owner", "status"], name="beammcp_task_owner"),
                    models.Index(fields=["expires_at"], name="beammcp_task_expiry"),
                ],
            },
        ),
    ]
