"""Each fixable rule's fix planner: from a finding to a FixPlan (tinker_lint.fix.plan)."""
