"""Control plane, topologies, experiments, reports and the `netweft` command line."""
