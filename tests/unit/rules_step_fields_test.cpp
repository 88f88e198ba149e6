// The step-line tokenizer (rules/step_fields.hpp) on the forms frameworks print. Lines are the
// formats of docs/log-formats.md §9 and of the project's corpus (tests/corpus/), each with the
// fields a careful reader sees in it.
#include "rules/step_fields.hpp"

#include <map>
#include <string>

#include <catch2/catch.hpp>

namespace faultd {
namespace {

std::map<std::string, std::string> fields_of(std::string_view line) {
  StepFields fields;
  read_step_fields(line, fields);
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : fields) out.emplace(name, value);
  return out;
}

using Fields = std::map<std::string, std::string>;

}  // namespace

TEST_CASE("step fields: key: value, 'key': value, key=value and | key value | forms",
          "[rules][step_fields]") {
  CHECK(fields_of("step: 12, loss: 0.52, overflow:False, scale:1024.0") ==
        Fields{{"step", "12"}, {"loss", "0.52"}, {"overflow", "False"}, {"scale", "1024.0"}});
  CHECK(fields_of("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 4.5e-06, 'epoch': 0.02}") ==
        Fields{{"loss", "0.0"}, {"grad_norm", "nan"}});
  CHECK(fields_of(" iteration     5426/  250000 | consumed samples:        43408 | elapsed time "
                  "per iteration (ms): 4247.9 | learning rate: 2.999E-04 | loss scale: 1.0 | "
                  "grad norm: nan | number of skipped iterations:   0 | number of nan "
                  "iterations:   0 |") == Fields{{"step", "5426"},
                                                 {"step_time", "4247.9"},
                                                 {"scale", "1.0"},
                                                 {"grad_norm", "nan"},
                                                 {"overflow", "0"},
                                                 {"nan_iterations", "0"},
                                                 {"loss", "nan"}});
  CHECK(fields_of("| epoch 027 | loss 6.343 | nll_loss 4.984 | ppl 31.65 | num_updates 10198 | "
                  "gnorm 0.390 | clip 0% | oom 0 | loss_scale 0.500 | wall 23080") ==
        Fields{{"loss", "6.343"}, {"step", "10198"}, {"grad_norm", "0.390"}, {"scale", "0.500"}});
  CHECK(fields_of("| epoch 001:    200 / 1374 loss=14.351, ppl=20899.56, num_updates=190, "
                  "gnorm=3.901, loss_scale=0.062, wall=1061") ==
        Fields{{"loss", "14.351"}, {"step", "190"}, {"grad_norm", "3.901"}, {"scale", "0.062"}});
  CHECK(fields_of("- INFO - { Epoch:[  1/  2], step:[    2/ 6500], loss: 0.000, per_step_time: "
                  "7637ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: "
                  "[47.329006], train_throughput_per_npu: 62.211T") ==
        Fields{{"step", "2"},
               {"loss", "0.000"},
               {"step_time", "7637ms"},
               {"overflow", "False"},
               {"scale", "1.0"},
               {"grad_norm", "47.329006"}});
  CHECK(fields_of("02:29:53: train iter: 100 loss_net: nan loss_scale: 785.4200 norm: nan "
                  "norm_average: 0.8729 seconds: 122.871") ==
        Fields{{"step", "100"}, {"loss", "nan"}, {"scale", "785.4200"}, {"grad_norm", "nan"}});
  CHECK(fields_of("Epoch: 1/1, Iteration: 2/160782, Training Loss: nan") ==
        Fields{{"step", "2"}, {"loss", "nan"}});
  // A camel-case compound ending in "Loss" (MXNet's metric names); "Lossy" and "loss" glued
  // to a lower-case word are not one.
  CHECK(fields_of("Epoch[1] Batch[7] Speed: 143.86 samples/sec,  IDLoss=nan,") ==
        Fields{{"loss", "nan"}});
  CHECK(fields_of("CELoss: 2.5, TotalLoss: 3.1") == Fields{{"loss", "2.5"}});
  CHECK(fields_of("Lossy=1, xloss=2, Loss7=3").empty());
}

TEST_CASE("step fields: Megatron's iteration line without a loss had a NaN loss",
          "[rules][step_fields]") {
  // deepspeedai/Megatron-DeepSpeed#434: training_log prints averages above 0 only, so a NaN
  // loss is simply missing (and bf16 counts no NaN iteration).
  const std::string no_loss =
      " iteration        9/      10 | consumed samples:          108 | consumed tokens:       "
      "442368 | elapsed time per iteration (ms): 1979.2 | learning rate: 4.219E-07 | global "
      "batch size:    12 | loss scale: 1.0 | actual seqlen:  4096 | number of skipped "
      "iterations:   0 | number of nan iterations:   0 |";
  CHECK(fields_of(no_loss).at("loss") == "nan");
  // Its loss when printed; an interval whose iterations were all skipped (an fp16 overflow)
  // has nothing to average, which is no NaN; nor is a line of another framework.
  CHECK(fields_of(" iteration 3/ 10 | lm loss: 7.3E+00 | loss scale: 1.0 | number of skipped "
                  "iterations:   0 | number of nan iterations:   0 |")
            .at("loss") == "7.3E+00");
  CHECK(fields_of(" iteration 3/ 10 | loss scale: 65536.0 | number of skipped iterations:   1 | "
                  "number of nan iterations:   0 |")
            .count("loss") == 0);
  CHECK(fields_of("step: 3, loss scale: 1.0, skipped iterations: 0").count("loss") == 0);
}

TEST_CASE("step fields: a value printed as a PyTorch tensor", "[rules][step_fields]") {
  // detectron2's loss_dict (facebookresearch/detectron2#425).
  CHECK(fields_of("loss_dict = {'loss_cls': tensor(nan, device='cuda:1', grad_fn=<NllLossBackward>)"
                  ", 'loss_box_reg': tensor(0.2576, device='cuda:1', grad_fn=<DivBackward0>)}") ==
        Fields{{"loss", "nan"}});
  CHECK(fields_of("{'loss': tensor(2.3051, device='cuda:0'), 'grad_norm': tensor(inf)}") ==
        Fields{{"loss", "2.3051"}, {"grad_norm", "inf"}});
  // The word alone, or a tensor of something else, is no value.
  CHECK(fields_of("loss tensor shape: [4, 8]").count("loss") == 0);
}

TEST_CASE("step fields: a progress bar run into the next output", "[rules][step_fields]") {
  // Keras's progress bar, redrawn with '\r', then "Epoch 1/1000" on the same line (the
  // project's corpus): the value ends where the capital letter starts.
  CHECK(fields_of(" 99/100 [============================>.] - ETA: 3s - loss: nanEpoch 1/1000") ==
        Fields{{"loss", "nan"}});
  CHECK(fields_of("- loss: -infStep 3") == Fields{{"loss", "-inf"}, {"step", "3"}});
  // A word that merely starts with the letters is a word: "nano", "info", "Nan" + lower case.
  CHECK(fields_of("loss: nanoseconds").count("loss") == 0);
  CHECK(fields_of("loss: information").count("loss") == 0);
}

TEST_CASE("step fields: the loss scalers' phrases", "[rules][step_fields]") {
  CHECK(fields_of("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 16, "
                  "reducing to 8") ==
        Fields{{"scale_from", "16"}, {"scale", "8"}, {"overflow", "OVERFLOW"}});
  // The hysteresis variant lowers no scale.
  CHECK(fields_of("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but "
                  "hysteresis is 2. Reducing hysteresis to 1") ==
        Fields{{"scale_from", "65536"}, {"overflow", "OVERFLOW"}});
  CHECK(fields_of("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to "
                  "32768.0") == Fields{{"scale", "32768.0"}, {"overflow", "overflow"}});
  CHECK(fields_of("[WARNING] overflow, still update, loss scale adjust to 1024.0") ==
        Fields{{"scale", "1024.0"}, {"overflow", "overflow"}});
  CHECK(fields_of("| WARNING: overflow detected, setting loss scale to: 0.25") ==
        Fields{{"scale", "0.25"}, {"overflow", "overflow"}});
  CHECK(fields_of("Loss scaler reducing loss scale to 512.0") == Fields{{"scale", "512.0"}});
  CHECK(fields_of("Gradient overflow. Skipping step") == Fields{{"overflow", "overflow"}});
  // DeepSpeed's fused optimizer: a scaler lowers its scale only on an overflow; it raises it
  // after a run without one (deepspeedai/DeepSpeed threads, fused_optimizer.py _update_scale).
  CHECK(fields_of("[2021-01-26 22:04:09,190] [INFO] [fused_optimizer.py:316:_update_scale] "
                  "Reducing dynamic loss scale from 8.0 to 4.0") ==
        Fields{{"scale_from", "8.0"}, {"scale", "4.0"}, {"overflow", "Reducing"}});
  CHECK(fields_of("[INFO] [fused_optimizer.py:323:_update_scale] Increasing dynamic loss scale "
                  "from 8.0 to 16.0") == Fields{{"scale_from", "8.0"}, {"scale", "16.0"}});
  // PaddlePaddle's scaler, as PaddleNLP's trainer warns (PaddlePaddle/PaddleNLP#7537).
  CHECK(fields_of("[2023-11-28 14:31:29,583] [ WARNING] - optimizer not run, scale_before: 0.25, "
                  "scale_after: 0.125") == Fields{{"scale_from", "0.25"}, {"scale", "0.125"}});
  // "before" and "after" alone name nothing.
  CHECK(fields_of("time before: 3.5, after: 4.0") == Fields{});
  // Its older dygraph scaler found the gradients not finite at its current scale
  // (PaddlePaddle/PaddleClas#2457); "found" before a number is no overflow.
  CHECK(fields_of("Found inf or nan, current scale is: 3.0517578125e-05, decrease to: "
                  "3.0517578125e-05*0.5") ==
        Fields{{"scale", "3.0517578125e-05"}, {"overflow", "Found"}});
  CHECK(fields_of("Found 3 bad samples, current scale is: 1024.0") == Fields{{"scale", "1024.0"}});
}

TEST_CASE("step fields: a name in a dotted namespace", "[rules][step_fields]") {
  // mmseg's losses by head (lhoyer/DAFormer#22): the first loss named so is the loss.
  CHECK(fields_of("2022-05-07 17:02:57,696 - mmseg - INFO - Iter [50/40000]        lr: "
                  "1.958e-06, eta: 1 day, 0:29:42, time: 2.207, data_time: 0.029, memory: 9801, "
                  "decode.loss_seg: nan, decode.acc_seg: 32.2611, src.loss_imnet_feat_dist: nan, "
                  "mix.decode.loss_seg: nan, mix.decode.acc_seg: 54.3771") ==
        Fields{{"step", "50"}, {"loss", "nan"}});
  CHECK(fields_of("aux.loss_ce: 0.25") == Fields{{"loss", "0.25"}});
  // The namespace still says what it names: a validation loss is none.
  CHECK(fields_of("val.loss: 0.3, val.loss_cls: 0.1") == Fields{});
  // A dot between a word and a number, or ending a sentence, is no namespace.
  CHECK(fields_of("Epoch 3. loss: 0.5") == Fields{{"loss", "0.5"}});
}

TEST_CASE("step fields: a key and its value joined by a verb", "[rules][step_fields]") {
  // FunASR's trainer skipping an update (modelscope/FunASR threads): "is" joins key and value.
  CHECK(fields_of("[2025-10-29 23:59:01,773][root][WARNING] - The grad norm is nan. Skipping "
                  "updating the model.") == Fields{{"grad_norm", "nan"}});
  CHECK(fields_of("step 12: loss was inf, scale is 1024.0") ==
        Fields{{"step", "12"}, {"loss", "inf"}, {"scale", "1024.0"}});
  // Python's repr of (name, value) pairs, on the step line between those warnings.
  CHECK(fields_of("train, rank: 0, epoch: 0/100, total step: 3, (loss_avg_rank: 24.221), [('loss', "
                  "24.221), ('acc_rich', 1.0)]") == Fields{{"step", "3"}, {"loss", "24.221"}});
  // A list of names is no pair: "['loss', 'acc']" gives nothing.
  CHECK(fields_of("metrics: ['loss', 'acc'], 3 epochs").empty());
  // A verb that joins no value, or a value that is a condition or a question, is no field.
  for (const char* prose :
       {"loss is not nan", "Checking whether loss is nan or inf", "loss is nan? False",
        "Stop training when the loss is nan", "The step is skipped when grad norm is inf",
        "if the loss is nan, the step is skipped"}) {
    INFO(prose);
    CHECK(fields_of(prose).empty());
  }
  // A key of several words, one of them a value word.
  CHECK(fields_of("The number of nan iterations is 2.") == Fields{{"nan_iterations", "2"}});
  // The verb does not make a key of prose: DeepSpeed's hysteresis is no field.
  CHECK(fields_of("but hysteresis is 2. Reducing hysteresis to 1").empty());
}

TEST_CASE("step fields: what is no step line gives nothing", "[rules][step_fields]") {
  // An overflow dump record is no scaler's line; a threshold is no grad norm; prose about NaN
  // names no value.
  const Fields dump = fields_of(
      "overflow dump: device=3 model=1 iteration=100 task=60 stream=2 timestamp=1767312100000 "
      "overflow=aicore status=272 cause=0x10+0x100 file=/var/log/npu/overflow/3/1/0/x.60");
  CHECK(dump.count("overflow") == 0);
  CHECK(fields_of("opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]")
            .count("grad_norm") == 0);
  CHECK(
      fields_of("AssertionError: Rank 3: found NaN in local grad norm in backwards pass.").empty());
  CHECK(fields_of("").empty());
  CHECK(fields_of("- - - : = | , {}").empty());
  // valid_loss is a validation figure, not the training loss.
  CHECK(fields_of("| valid on 'valid' subset | valid_loss 8.30118 | num_updates 10198") ==
        Fields{{"step", "10198"}});
}

}  // namespace faultd

namespace faultd {

TEST_CASE("step fields: a reader of a source's lines gives what each line gives alone",
          "[rules][step_fields]") {
  // Lines of a few shapes, cycled through more shapes than the reader keeps, with digits that
  // change what the fields imply: Megatron's line without a loss had a NaN loss only when no
  // iteration was skipped (0, not 1, of the same shape).
  const std::vector<std::string> lines = {
      " iteration        4/  250000 | loss scale: 1.0 | number of skipped iterations:   0 | "
      "number of nan iterations:   1 |",
      " iteration        5/  250000 | loss scale: 1.0 | number of skipped iterations:   1 | "
      "number of nan iterations:   1 |",
      "{'loss': 1.2645, 'grad_norm': 0.8731, 'epoch': 0.02}",
      "{'loss': 1.2645, 'grad_norm': 0.8731, 'epoch': 0.03}",
      "step: 12, loss: 0.52, overflow:False, scale:1024.0",
      "step: 13, loss: 0.51, overflow:False, scale:1024.0",
      "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
      "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
      "epoch 1 | loss 2.25 | gnorm 0.5 | num_updates 10",
      " iteration        6/  250000 | loss scale: 1.0 | number of skipped iterations:   0 | "
      "number of nan iterations:   1 |",
  };
  StepFieldReader reader;
  for (int round = 0; round < 3; ++round) {
    for (const std::string& line : lines) {
      StepFields alone;
      read_step_fields(line, alone);
      INFO(line);
      REQUIRE(reader.read(line) == alone);
    }
  }
  // The lines above do differ where it matters.
  StepFields first, second;
  read_step_fields(lines[0], first);
  read_step_fields(lines[1], second);
  CHECK(first.size() == second.size() + 1);  // the implied NaN loss
}

}  // namespace faultd
