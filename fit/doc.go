// Package fit chooses a per-tensor quantization recipe for given per-device
// budgets: the best predicted quality whose tensors fit each device's bytes
// after reserves (KV cache, compute buffers).
//
// It works in four steps, each in its own file:
//
//   - candidates.go: for every tensor the types it may take, after the
//     reference's block-size and row-interleave fallbacks (decided by
//     recipes.Select, so a rule written for the type gives that type), with
//     the exact bytes the planner counts;
//   - measure.go: the importance-weighted relative error of each candidate,
//     measured by quantizing a sample of rows (of every expert of a 3-D
//     tensor) with the real kernels and the importance data the real run
//     uses, then dequantizing (cache.go keeps the measurements);
//   - gains.go: per-class gains that turn errors into a predicted loss and
//     a predicted KL divergence (calibrate.go fits them to measured ones);
//   - optimize.go: a multiple-choice knapsack per device (Lagrangian
//     relaxation over each tensor's convex hull, a greedy fill of the slack,
//     swaps of two or three tensors, then an exact search over Pareto
//     frontiers pruned by the Lagrangian bound), after which recipe.go
//     writes the choice as a compact rule file;
//   - fit.go: placement, budgets and reserves (reserve.go: KV caches from
//     the model's shape), ties and pins, and the check that the planner
//     reads the recipe back with the fitted bytes on every device.
package fit
