from django.contrib import admin

from sample_project.demo.models import Observation


@admin.register(Observation)
class ObservationAdmin(admin.ModelAdmin):
    list_display = ("city", "temperature_c", "recorded_at")
    list_filter = ("city",)
