"""From a due monitor to durable events: scheduling, notify dispatch, materialization."""
