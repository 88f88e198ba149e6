// msprobe's layer mapping (`compare -lm layer_mapping.yaml`): when two frameworks, or two model
// suites, name the same layers differently, the operator writes for each layer class how its
// children are called on the bench side:
//
//   TopLayer:                          # the model itself ("Cell" in older files)
//     network_with_loss: module
//   ParallelTransformerLayer:
//     attention: self_attention
//   VocabParallelEmbedding:
//     reduce_from_mp_region.all_reduce: all_reduce   # a key may span several levels
//
// A module row's name holds its path from the top (`Cell.network_with_loss.module.encoder.
// layers.0.attention.ParallelAttention.forward.0.input.0`); the class of each layer on that path
// is known from the dump's own rows for that layer. The path is rewritten level by level with
// the rules of the parent layer's class (the longest key first; a value's "(...)" suffix is
// dropped, as msprobe does), and the row pairs with the bench row at the rewritten path with
// the same direction, call index and argument, whatever the class is called there (FusedRMSNorm
// against RMSNorm) and whichever prefix (Cell or Module) names it. Like msprobe, the pairs it
// finds are a data mapping: taken as given, ahead of the name join.
//
// Not done: API calls inside a layer (msprobe places them by construct.json and the call stack);
// those still pair by name (Mint. as Torch.) or through --data-mapping.
//
// Lifecycle: loaded once per command, read-only after. Threading: shared by the comparing
// threads, never written.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/dump.hpp"

namespace faultd::compare {

struct LayerMapping {
  struct Rule {
    std::vector<std::string> from;  // the NPU side's name, one or more levels
    std::vector<std::string> to;    // the bench side's
  };
  // Layer class → its rules, the longest `from` first. The top of the model is "TopLayer".
  std::map<std::string, std::vector<Rule>> by_class;
};

// Throws InputError listing every problem as file:line:column: message, one per line.
LayerMapping load_layer_mapping(const std::string& path);
LayerMapping parse_layer_mapping(const std::string& text, const std::string& file);

// The NPU module rows the mapping pairs with a bench row: NPU name → bench name.
std::map<std::string, std::string> layer_data_mapping(const Dump& npu, const Dump& bench,
                                                      const LayerMapping& mapping);

}  // namespace faultd::compare
