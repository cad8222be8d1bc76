-- Reserved for wave 2, issue 13 (predicates, fields, fixes).
SELECT 1;
