/** IFEval's two comparisons (`_COMPARISON_RELATION`): "less than" is `count < n`, "at least" is `count >= n`. */
export type Relation = "less than" | "at least";

export const RELATIONS: readonly Relation[] = ["less than", "at least"];

export function holds(count: number, relation: Relation, threshold: number): boolean {
  return relation === "less than" ? count < threshold : count >= threshold;
}

/** "need less than 300", "need at least 3". */
export function need(relation: Relation, threshold: number): string {
  return `need ${relation} ${threshold}`;
}
