-- Reserved for wave 2, issue 8 (faults): replaced by the real migration on that branch.
SELECT 1;
