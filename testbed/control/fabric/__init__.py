"""The fabric controller: routes, ECMP groups and multicast trees computed from a topology
(sans-IO), and their installation on every switch over P4Runtime."""
