-- Tasks' suggestions as a funnel: per task, entity type and status, how many there are, how
-- many were applied (applied_at set, no apply_error), failed to apply, or were not applied.
SELECT
    i.account_id,
    i.task,
    t.title AS task_title,
    t.priority AS task_priority,
    t.status AS task_status,
    i.entity_type,
    i.status,
    count(*) AS suggestions,
    count(*) FILTER (WHERE i.applied_at IS NOT NULL AND i.apply_error IS NULL) AS applied,
    count(*) FILTER (WHERE i.apply_error IS NOT NULL) AS apply_failed,
    count(*) FILTER (WHERE i.applied_at IS NULL AND i.apply_error IS NULL) AS not_applied
FROM {{ source('lake', 'task_items') }} AS i
LEFT JOIN {{ source('lake', 'tasks') }} AS t ON t.account_id = i.account_id AND t.id = i.task
GROUP BY ALL
