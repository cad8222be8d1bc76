-- Reserved for wave 2, issue 14 (early interrupt).
SELECT 1;
