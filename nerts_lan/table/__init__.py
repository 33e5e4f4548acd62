"""One table, sans-IO: the ordered log's commands, seating, the table machine, the replica and the
peer."""
