package audit

// DecisionReconciled is the row an operator's reconcile writes after the
// gate found its store behind its watermark: it names the store's head as
// found and the mark it was behind, and who reviewed it. The tickets held
// by the same reconcile each have a row of their own.
const DecisionReconciled = "reconciled"
