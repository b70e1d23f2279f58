from django.db import models


class Observation(models.Model):
    """A temperature someone reported through the ``record_observation`` tool."""

    city = models.CharField(max_length=64, db_index=True)
    temperature_c = models.FloatField()
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-recorded_at", "-id"]

    def __str__(self) -> str:
        return f"{self.city}: {self.temperature_c} °C"
