/** What a budget limits, and what a budget stop names: tokens (prompt plus completion), calls, or wall-clock time. */
export type BudgetKind = "tokens" | "calls" | "time";
