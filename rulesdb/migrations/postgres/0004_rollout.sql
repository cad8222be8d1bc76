-- Reserved for wave 2, issue 11 (shadow, outcomes, counters).
SELECT 1;
