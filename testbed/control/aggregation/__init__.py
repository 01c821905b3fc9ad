"""In-network aggregation jobs: where a job's workers are seen from the switch that
aggregates (placement), and their installation on that switch over P4Runtime."""
