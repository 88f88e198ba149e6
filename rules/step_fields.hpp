// The numbers a training job prints every step, read whatever the framework's order, spelling
// and punctuation, so that the numerics detectors read fields, not one regex per framework.
//
// One tokenizer takes every `key: value`, `'key': value`, `"key": value`, `key=value`, the
// `| key value |` cells of Megatron and fairseq, `{ key: [value] }`, Python's `('key', value)`
// pairs, a key and its value joined by a verb ("The grad norm is nan."), and the phrases loss
// scalers print ("reducing loss scale to 512.0", "Attempted loss scale: 16, reducing to 8",
// "loss scale adjust to 1024.0", "setting loss scale to: 0.25"). A key is the words before the
// separator (after the previous value or a `,|{}();` boundary), folded to lower case with `_`,
// `-`, `/` and quotes read as blanks; a dotted namespace before it ("decode." of mmseg's
// "decode.loss_seg") is no part of the name but still says what it names ("val.loss" is a
// validation loss); a synonym table maps it to the detectors' vocabulary:
//
//   step            iteration, iter, step, global step, num updates ("100/3995" gives 100)
//   loss            a key whose last word is loss (lm loss, train_loss, Training Loss, loss_net)
//                   and that is no scale or validation loss
//   grad_norm       grad norm, grad_norm, gnorm, global norm, total norm, norm
//   scale           loss scale, loss_scale, scale, cur scale, current scale, grad scale, and
//                   the "... to N" phrases of the scalers, PaddlePaddle's scale_after; scale_from
//                   is DeepSpeed's "Attempted loss scale", the N of "loss scale from N to M" and
//                   PaddlePaddle's scale_before
//   overflow        overflow / overflow cond / is overflow (True, False, or a number), the
//                   number of skipped iterations; else the word itself when a loss scaler's
//                   line reports one ("OVERFLOW! ... Skipping step", "Gradient overflow.
//                   Skipping step", "overflow detected, setting loss scale to: 0.25", a
//                   scaler that "Found inf or nan" at its current scale), or the
//                   word "Reducing" when the scaler says it lowered its scale from N to M
//   nan_iterations  number of nan iterations
//   step_time       elapsed time per iteration (ms), per_step_time, step time
//
// The first value of a name wins ("lm loss" before a later "loss"). Values are views into the
// line: a number as printed (nan, inf, 7.3E-01, 1024.0, "166756ms"), True or False, or the first
// number of "N/M", "[N]" and PyTorch's "tensor(N, ...)"; one is not: Megatron's iteration line
// leaves a NaN loss out (it prints averages above 0 only), so such a line with no loss and no
// skipped iteration gives loss "nan". Unknown keys are skipped. Pure; no allocation beyond `out`.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "rules/line_shape.hpp"

namespace faultd {

using StepFields = std::vector<std::pair<std::string_view, std::string_view>>;

// Appends the step fields `line` names to `out` (names are static strings, values view `line`
// or are static strings).
void read_step_fields(std::string_view line, StepFields& out);

// read_step_fields for one source's lines, which a training job prints alike step after step:
// the tokenizer's choices depend on which bytes are digits, never on which digits they are, so
// a line of a shape read before (rules/line_shape.hpp) has its fields at the same places, and
// they are taken from there instead of being read again. Gives what read_step_fields gives,
// whatever the lines.
class StepFieldReader {
 public:
  // The line's fields, valid until the next read.
  const StepFields& read(std::string_view line);

 private:
  struct Place {
    std::string_view name;
    size_t offset;
    size_t size;
  };
  ShapeCache<std::vector<Place>> places_;
  StepFields fields_;
};

}  // namespace faultd
