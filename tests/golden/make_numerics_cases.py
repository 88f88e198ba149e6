#!/usr/bin/env python3
"""Writes the numerics-* golden cases: training logs of each framework format of
docs/log-formats.md §9, run through the detectors of etc/faultd/rules.d/training-numerics.yaml.

Each positive line is declared next to the findings it must give (`expect(...)`); everything
else, including the verbatim lines of §9 and the traps (calibration burst, a single overflow,
bf16's constant scale 1.0, "nan iterations: 0"), must give nothing. The golden runner takes line
N to arrive N seconds after the start, and a case's `tick_after` is the silence after the last
line (what the stall detectors see). Re-run after editing and review the diff."""
import json
import os

# The three rules that read any framework's step-line fields (rules/step_fields.hpp).
NON_FINITE = "training.step.non-finite"
STORM = "training.step.overflow-storm"
COLLAPSE = "training.step.loss-scale-collapse"

HERE = os.path.dirname(os.path.abspath(__file__))
PATH_FIELDS = r"worker_(?P<device>\d+)\.log$"


class Case:
    def __init__(self, name, readme, path="/var/log/training/job-7/worker_3.log", device="3"):
        self.name, self.readme, self.path, self.device = name, readme, path, device
        self.lines, self.expected, self.tick_after = [], [], None

    def add(self, line):
        self.lines.append(line)
        return len(self.lines)

    def expect(self, rule, level, device=None, line=None):
        self.expected.append({"rule": rule, "device": self.device if device is None else device,
                              "level": level, "code": "", "line": line or len(self.lines)})

    def write(self):
        d = os.path.join(HERE, self.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "input.log"), "w") as f:
            f.write("".join(l + "\n" for l in self.lines))
        with open(os.path.join(d, "source"), "w") as f:
            f.write("training\n%s\n" % self.path)
        with open(os.path.join(d, "path_fields"), "w") as f:
            f.write(PATH_FIELDS + "\n")
        with open(os.path.join(d, "expected.jsonl"), "w") as f:
            for e in self.expected:
                f.write(json.dumps(e) + "\n")
        tick = os.path.join(d, "tick_after")
        if self.tick_after:
            with open(tick, "w") as f:
                f.write(self.tick_after + "\n")
        elif os.path.exists(tick):
            os.remove(tick)
        with open(os.path.join(d, "README"), "w") as f:
            f.write(self.readme.strip() + "\n")


def mindspore():
    c = Case("numerics-mindspore", """
MindSpore step lines as printed by the loop of seed 003 (`step: N, loss: X, overflow:B, scale:S`).
The first lines are seed 003's own (static scale 1.0); the rest are constructed in that shape:
a calibration burst of halvings at steps 0-4 (quiet: a healthy scale, and more than 100 steps
before the storm), a single overflow at step 25 (quiet), an overflow storm at steps 140-142 at a
scale of 512 to 128 (the rate fires; no collapse: 128 is still above 64), NaN loss at steps
150-152 (non_finite records the first and fires on the third), then the job goes silent for an
hour (stall fires on the last step).""")
    for step, loss in [(0, "138.42825"), (1, "118.172104"), (2, "159.14542"), (3, "150.65671")]:
        c.add("step: %d, loss: %s, overflow:False, scale:1.0" % (step, loss))
    c.add("step: 97, loss: 69.513245, overflow:False, scale:1.0")
    c.add("step: 98, loss: 51.903114, overflow:False, scale:1.0")
    c.add("step: 99, loss: 42.250656, overflow:False, scale:1.0")
    # A new run in the same file (steps go back to 0): dynamic loss scale from 65536.
    scale = 65536.0
    for step in range(0, 160):
        overflow = step < 5 or step == 25 or 140 <= step <= 142
        if overflow:
            scale /= 2
        loss = "nan" if 150 <= step <= 152 else "%.4f" % (2.0 - step * 0.01)
        c.add("step: %d, loss: %s, overflow:%s, scale:%.1f" % (step, loss, overflow, scale))
        if step == 142:
            c.expect(STORM, "SubHealthFault")
        if step == 150:
            c.expect(NON_FINITE, "NotHandleFault")
        if step == 152:
            c.expect(NON_FINITE, "SubHealthFault")
    c.tick_after = "1h"
    c.expect("training.mindspore.stall", "SubHealthFault")
    return c


def mindformers():
    c = Case("numerics-mindformers", """
MindFormers step lines. Line 1 is verbatim from docs/log-formats.md §9 (MindFormers
skip_data_and_ckpt_health_monitor.md, a 166 s first step with loss_scale 1.0: quiet). The rest
are constructed in that shape: a 10x wobble of global_norm (quiet), a global_norm spike of 5e7
at step 40 (one strike: a warning at that very step), slow steps from step 50 (slow_step fires on
the fifth), three `overflow cond: True` at steps 70-72 with a constant scale (rate fires;
collapse does not: the scale never dropped), NaN loss and norm at steps 80-82 with the scale
dropped to 0.5 (non_finite records the first and fires on the third, collapse fires at the floor,
a second storm), then an hour of silence (stall).""")
    c.add("2024-06-24 10:00:00,000 - mindformers - INFO - { Epoch:[  1/  2], step:[    1/ 6500], loss: 0.000, per_step_time: 166756ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: [44.313248], train_throughput_per_npu: 2.849T")
    for step in range(2, 80):
        norm = 0.8 + 0.05 * (step % 3)
        if step == 25:
            norm = 8.0
        if step == 40:
            norm = 5e7
        t = 1000 + (step % 4) * 10 if step < 50 or step > 58 else 2600
        overflow = 70 <= step <= 72
        c.add("2024-06-24 10:%02d:00,000 - mindformers - INFO - { Epoch:[  1/  2], step:[%5d/ 6500], loss: %.3f, per_step_time: %dms, lr: 1e-05, overflow cond: %s, loss_scale: 1.0, global_norm: [%g], train_throughput_per_npu: 2.849T" % (step % 60, step, 2.0 - step * 0.01, t, overflow, norm))
        if step == 40:
            c.expect("training.mindformers.grad-norm-anomaly", "SubHealthFault")
        if step == 54:
            c.expect("training.mindformers.slow-step", "SubHealthFault")
        if step == 72:
            c.expect(STORM, "SubHealthFault")
    # NaN loss and norm for three steps
    for step in range(80, 83):
        c.add("2024-06-24 11:%02d:00,000 - mindformers - INFO - { Epoch:[  1/  2], step:[%5d/ 6500], loss: nan, per_step_time: 1000ms, lr: 1e-05, overflow cond: True, loss_scale: 0.5, global_norm: [nan], train_throughput_per_npu: 2.849T" % (step % 60, step))
        if step == 80:
            c.expect(NON_FINITE, "NotHandleFault")
            c.expect(COLLAPSE, "SubHealthFault")
        if step == 82:  # overflow cond: True again on all three: a second storm
            c.expect(NON_FINITE, "SubHealthFault")
            c.expect(STORM, "SubHealthFault")
    c.tick_after = "1h"
    c.expect("training.mindformers.stall", "SubHealthFault")
    return c


def megatron():
    c = Case("numerics-megatron", """
Megatron / MindSpeed iteration lines. Line 1 is the §9 example verbatim (`nan iterations: 0`
is not NaN: quiet). The rest are constructed in Megatron's full layout: fp16 with a dynamic
scale calibrating at iterations 1-5 down to 4096 (quiet: a healthy scale), grad norm `nan` with
both counters 0 for three intervals (Megatron-DeepSpeed#396: non_finite records the first and
fires on the third; NaN is not a feature-value strike), skipped iterations in three intervals at
2048-512 (rate fires), a grad-norm spike (strike), slow intervals (slow_step), the scale then
driven from 512 to 1 (a storm every third interval; collapse on the second drop to 64 or below
and at the floor), an hour of silence (stall).""")
    c.add("... | lm loss: 7.334521E-01 | loss scale: 1.0 | grad norm: 0.752 | number of skipped iterations:   0 | number of nan iterations:   0 |")
    scale = 4096.0 * 32

    def it(i, loss="2.1", grad="0.9", skipped=0, nans=0, ms=1200.0):
        return (" iteration %8d/  500000 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: 1.000E-04 | global batch size:  1024 | lm loss: %s | loss scale: %.1f | grad norm: %s | number of skipped iterations: %3d | number of nan iterations: %3d |"
                % (i, i * 1024, ms, loss, scale, grad, skipped, nans))

    for i in range(1, 80):
        skipped = 0
        if i <= 5 or i in (40, 41, 42):
            scale /= 2
            skipped = 1
        grad = "%.3f" % (0.9 + 0.01 * (i % 5))
        if 30 <= i <= 32:
            grad = "nan"
        if i == 50:
            grad = "3.0E+07"
        ms = 1200.0 + (i % 3) * 5
        if 60 <= i <= 66:
            ms = 3000.0
        c.add(it(i, grad=grad, skipped=skipped, ms=ms))
        if i == 30:
            c.expect(NON_FINITE, "NotHandleFault")
        if i == 32:
            c.expect(NON_FINITE, "SubHealthFault")
        if i == 42:
            c.expect(STORM, "SubHealthFault")
        if i == 50:
            c.expect("training.megatron.grad-norm-anomaly", "SubHealthFault")
        if i == 64:
            c.expect("training.megatron.slow-step", "SubHealthFault")
    # Overflow on every interval from here: the scale goes down from 512 to 1. Every third
    # skipped interval is another storm; the second drop to 64 or below (32) is a collapse, and
    # the last reaches the floor.
    drops = 0
    while scale > 1:
        scale /= 2
        drops += 1
        c.add(it(160 + drops, skipped=1))
        if drops % 3 == 0:
            c.expect(STORM, "SubHealthFault")
        if scale == 32 or scale == 1:
            c.expect(COLLAPSE, "SubHealthFault")
    c.tick_after = "1h"
    c.expect("training.megatron.stall", "SubHealthFault")
    return c


def deepspeed():
    c = Case("numerics-deepspeed", """
DeepSpeed's fp16 loss scaler. Line formats verbatim from docs/log-formats.md §9 (loss_scaler.py,
the older [deepscale] wording of stage2.py, the hysteresis variant, and the exception at the
minimum). Constructed sequence: the calibration burst from 2^32 (16 halvings: quiet, as in
DeepSpeed#931: a healthy scale), two hysteresis lines at 65536 (quiet), then overflow after
overflow from 65536 down to 256: the rate counts the overflows at an attempted scale below
4096 (2048, 1024, 512) and fires on the third, the line reducing 512 to 256; collapse does not
(256 is above 64). The lines name rank 0 and no device;
the device comes from the file's path.""")
    scale = 2 ** 32
    for i in range(16):
        tag = "deepscale" if i < 2 else "deepspeed"
        c.add("[2024-01-01 00:00:%02d,000] [INFO] [loss_scaler.py:183:update_scale] [%s] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (i, tag, scale, scale // 2))
        scale //= 2
    for i in range(2):
        c.add("[2024-01-01 00:01:0%d,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, but hysteresis is 2. Reducing hysteresis to 1" % (i, scale))
    for i in range(8):
        c.add("[2024-01-01 00:02:%02d,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (i, scale, scale // 2))
        scale //= 2
        if i == 7:  # attempted 512: the third overflow below 4096
            c.expect(STORM, "SubHealthFault")
    c.add("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
    c.expect("training.framework.loss-scale-minimum", "RestartBusiness")
    return c


def halving_case(name, readme, template):
    """25 overflows in a row halving the scale from 2^32, one line each (`template` % scale):
    the rate fires on the third overflow at a scale below 4096 (line 24: the scale before it is
    512, the last line's); the scale ends at 128, above
    the collapse threshold of 64."""
    c = Case(name, readme)
    scale = 65536.0 * 65536
    for i in range(25):
        scale /= 2
        c.add(template % scale)
        if i == 23:
            c.expect(STORM, "SubHealthFault")
    return c


def apex():
    return halving_case("numerics-apex", """
apex amp's loss scaler, the format verbatim from docs/log-formats.md §9: 25 overflows in a row
halving the scale from 2^32. The overflows at a healthy scale (4096 and above) are calibration;
the rate counts those below it (at 2048, 1024, 512: the scale before each line, which names
only the scale it lowers to) and fires on the third (line 24); the scale
ends at 128, above the collapse threshold of 64.""",
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to %.1f")


def mindyolo():
    return halving_case("numerics-mindyolo", """
mindyolo's overflow line, the format verbatim from docs/log-formats.md §9, in the same shape as
numerics-apex: the rate fires on the third overflow below 4096 (line 24).""",
        "[WARNING] overflow, still update, loss scale adjust to %.1f")


def hf():
    c = Case("numerics-hf", """
Hugging Face Trainer log dicts, the format verbatim from docs/log-formats.md §9: 12 normal
dicts, a grad_norm spike (a feature-value strike), `'grad_norm': nan` three times (non_finite
records the first and fires on the third).""")
    for i in range(12):
        c.add("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': 4.9e-05, 'epoch': 0.%02d}" % (1.5 - i * 0.01, 0.9 + 0.01 * (i % 3), i))
    c.add("{'loss': 1.2, 'grad_norm': 40000000.0, 'learning_rate': 4.9e-05, 'epoch': 0.13}")
    c.expect("training.hf.grad-norm-anomaly", "SubHealthFault")
    for i in range(3):
        c.add("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 4.9e-05, 'epoch': 0.%02d}" % (14 + i))
        if i == 0:
            c.expect(NON_FINITE, "NotHandleFault")
    c.expect(NON_FINITE, "SubHealthFault")
    return c


def stop_messages():
    c = Case("numerics-stop-messages", """
A framework stopping or flagging the job for its numerics (plain findings, no detector). Lines 1
and 2 are verbatim from public issue threads (tests/corpus/expected.tsv: Megatron's rerun state
machine, and NeMo's RuntimeError naming its device); lines 3 and 4 are constructed from the
messages in the frameworks' source (MindFormers' global-norm check, fairseq's dynamic loss
scaler). Lines 5 and 6 look alike and must give nothing: Megatron's result validation being
enabled, and a MindFormers threshold in its configuration. The file's path names no device, so
only line 2 has one.""", path="/var/log/training/job-7/train.log", device="")
    c.add("ERROR:megatron.core.rerun_state_machine:Unexpected result nan on rank 3 at iteration #3 invocation #2 (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')")
    c.expect("training.megatron.unexpected-nan", "SubHealthFault")
    c.add("i.pretrain/0 [default2]:[rank2]: RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, iteration -1: Unexpected result nan (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')")
    c.expect("training.megatron.unexpected-nan", "SubHealthFault", device="2")
    c.add("ValueError: Current global norm [12.5] of step 40 has been 3 consecutive times greater than threshold 3.0, stop training...")
    c.expect("training.mindformers.stop-training", "SubHealthFault")
    c.add("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size.")
    c.expect("training.framework.loss-scale-minimum", "RestartBusiness")
    c.add("INFO:megatron.core.rerun_state_machine:RerunStateMachine initialized in mode RerunMode.VALIDATE_RESULTS")
    c.add("- INFO - opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]")
    return c


def tensorboard():
    c = Case("numerics-tensorboard", """
tensorboardX refusing the NaN scalars a fairseq job logs, verbatim from a public issue thread
(facebookresearch/fairseq#1529, tests/corpus/expected.tsv): the first warning is recorded, the
third in a row marks the device warning. The INFO lines around them give nothing.""")
    c.add("2020-10-01 10:25:50 | INFO | fairseq_cli.train | end of epoch 73 (average epoch stats below)")
    for i in range(3):
        c.add("2020-10-01 10:25:50 | WARNING | root | NaN or Inf found in input tensor.")
        if i == 0:
            c.expect("training.logger.non-finite", "NotHandleFault")
    c.expect("training.logger.non-finite", "SubHealthFault")
    c.add("2020-10-01 10:25:50 | INFO | fairseq.trainer | begin training epoch 74")
    return c


def funasr():
    c = Case("numerics-funasr", """
FunASR's trainer skipping an update because the grad norm is NaN, verbatim from a public issue
thread (modelscope/FunASR, tests/corpus/expected.tsv): "The grad norm is nan" names the field
with a verb between key and value. The first is recorded; the step line between them has a
finite loss and no grad norm, so the next warning is the first of a new run, recorded again;
three in a row (lines 4 to 6, constructed by repeating the warning) mark the device warning.""",
             path="/var/log/training/job-7/train.log", device="")
    warning = "[2025-10-29 23:59:01,773][root][WARNING] - The grad norm is nan. Skipping updating the model."
    c.add(warning)
    c.expect(NON_FINITE, "NotHandleFault")
    c.add("[2025-10-29 23:59:01,779][root][INFO] - train, rank: 0, epoch: 0/100, data_slice: 0/1, step_in_slice: 3/44, step_in_epoch: 3, total step: 3, (loss_avg_rank: 24.221), (loss_avg_slice: 27.633), (ppl_avg_slice: 1.002e+12), (acc_avg_slice: 0.000), (lr: 3.000e-07), [('loss_ctc', 24.181), ('loss_rich', 0.041), ('loss', 24.221), ('acc_rich', 1.0)]")
    c.add("[2025-10-29 23:59:03,465][root][WARNING] - The grad norm is nan. Skipping updating the model.")
    c.expect(NON_FINITE, "NotHandleFault")
    for _ in range(2):
        c.add(warning)
    c.expect(NON_FINITE, "SubHealthFault")
    return c


def deepspeed_calibration():
    c = Case("numerics-deepspeed-calibration", """
DeepSpeed's loss scaler calibrating at the start of a run, verbatim from a public issue thread
(deepspeedai/DeepSpeed#5779, tests/corpus/expected.tsv): eight overflows in 13 seconds, the
scale halved from 65536 to 512. Only two of them overflowed at a scale below 4096 (the
attempted 2048 and 1024): no storm, and no collapse (512 is above 64). Nothing is found.""")
    for line in ['[2024-07-17 19:44:06,829] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1', '[2024-07-17 19:44:06,945] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768', '[2024-07-17 19:44:07,064] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 32768, reducing to 16384', '[2024-07-17 19:44:07,184] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 16384, reducing to 8192', '[2024-07-17 19:44:07,303] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 8192, reducing to 4096', '[2024-07-17 19:44:07,540] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 4096, reducing to 2048', '[2024-07-17 19:44:09,300] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2048, reducing to 1024', '[2024-07-17 19:44:19,048] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1024, reducing to 512']:
        c.add(line)
    return c


def deepspeed_stuck():
    c = Case("numerics-deepspeed-stuck", """
DeepSpeed's scaler overflowing at a scale of 0.0 and staying there, verbatim from a public issue
thread (ai-forever/ru-gpts#63, tests/corpus/expected.tsv; the line repeats in the thread, three
are kept here): a scale stuck at the floor is a collapse, found once; the third overflow at a
scale below 4096 is also a storm.""")
    for i in range(3):
        c.add('1622513061366 localhost info [2021-06-01 05:04:21,527] [INFO] [stage2.py:1357:step] [deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 0.0, reducing to 0.0')
        if i == 0:
            c.expect(COLLAPSE, "SubHealthFault")
    c.expect(STORM, "SubHealthFault")
    return c


def deepspeed_low_scale():
    c = Case("numerics-deepspeed-low-scale", """
DeepSpeed's scaler overflowing twice in a row once its scale is at or below 64, verbatim from a
public issue thread (CarperAI/trlx, tests/corpus/expected.tsv: a PPO run at step ~1044 of 6400,
128 to 64 to 32): the first drop to 64 is quiet, the second is a collapse. (A rise between two
such drops starts the count over: rules_detectors_test.cpp.)""")
    c.add("[2023-02-28 20:08:24,113] [INFO] [stage_1_and_2.py:1769:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 128.0, reducing to 64.0")
    c.add("[2023-02-28 20:08:24,338] [INFO] [stage_1_and_2.py:1769:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 64.0, reducing to 32.0")
    c.expect(COLLAPSE, "SubHealthFault")
    return c


def yolact():
    c = Case("numerics-yolact", """
YOLACT's loss averages refusing NaN and Inf losses, verbatim from a public issue thread
(dbolya/yolact#318, tests/corpus/expected.tsv): read as a non-finite loss, the first is
recorded and the third in a row marks the device warning.""", path="/var/log/training/job-30/train.log",
             device="")
    for i, v in enumerate(["nan", "inf", "nan"]):
        c.add("Warning: Moving average ignored a value of %s" % v)
        if i == 0:
            c.expect("training.logger.non-finite", "NotHandleFault")
    c.expect("training.logger.non-finite", "SubHealthFault")
    return c


def paddle_scaler():
    c = Case("numerics-paddle-scaler", """
PaddleNLP's trainer skipping optimizer steps with its loss scale already below 1, verbatim from
a public issue thread (PaddlePaddle/PaddleNLP#7537, tests/corpus/expected.tsv): scale_before and
scale_after are the scale it tried and the one it fell to; 0.25 to 0.125 is below the floor, a
collapse at once (and found once).""", path="/var/log/training/job-31/workerlog.0", device="")
    c.add("[2023-11-28 14:31:29,583] [ WARNING] - optimizer not run, scale_before: 0.25, scale_after: 0.125")
    c.expect(COLLAPSE, "SubHealthFault")
    c.add("[2023-11-28 14:31:29,586] [    INFO] - loss: 2.09252715, learning_rate: 0.0, global_step: 18, interval_runtime: 4.3468, interval_samples_per_second: 3.680853064067234, interval_steps_per_second: 0.23005331650420213, ppl: 8.10537279652747, epoch: 0.0025")
    c.add("[2023-11-28 14:31:34,041] [ WARNING] - optimizer not run, scale_before: 0.125, scale_after: 0.0625")
    return c


def paddle_dygraph_scaler():
    c = Case("numerics-paddle-dygraph-scaler", """
PaddleClas training with PaddlePaddle's older dygraph AMP scaler, verbatim from a public issue
thread (PaddlePaddle/PaddleClas#2457, tests/corpus/expected.tsv): each "Found inf or nan" is an
overflow at the "current scale", which halves line after line far below 1. The second such
line's drop is already below 1, a collapse; the third overflow at so low a scale is a storm; two
more drops are a collapse again, three more overflows a storm again.""",
             path="/var/log/training/job-33/workerlog.0", device="")
    c.add("[2022/11/08 14:54:54] ppcls INFO: [Train][Epoch 2/800][Iter: 0/366]lr(LinearWarmup): 0.05000000, CELoss: 11.76099, TripletAngularMarginLoss: 0.68000, loss: 12.44099, batch_cost: 0.54552s, reader_cost: 0.41536, ips: 117.31981 samples/s, eta: 1 day, 20:18:47")
    c.add("Found inf or nan, current scale is: 3.0517578125e-05, decrease to: 3.0517578125e-05*0.5")
    c.add("Found inf or nan, current scale is: 1.52587890625e-05, decrease to: 1.52587890625e-05*0.5")
    c.expect(COLLAPSE, "SubHealthFault")
    c.add("Found inf or nan, current scale is: 7.62939453125e-06, decrease to: 7.62939453125e-06*0.5")
    c.expect(STORM, "SubHealthFault")
    c.add("Found inf or nan, current scale is: 3.814697265625e-06, decrease to: 3.814697265625e-06*0.5")
    c.expect(COLLAPSE, "SubHealthFault")
    c.add("Found inf or nan, current scale is: 1.9073486328125e-06, decrease to: 1.9073486328125e-06*0.5")
    c.add("Found inf or nan, current scale is: 9.5367431640625e-07, decrease to: 9.5367431640625e-07*0.5")
    c.expect(STORM, "SubHealthFault")
    return c


def mmseg_namespaced_loss():
    c = Case("numerics-mmseg-namespaced-loss", """
mmseg (DAFormer) iteration lines whose losses are named in dotted namespaces
(decode.loss_seg, src.loss_imnet_feat_dist, mix.decode.loss_seg), verbatim from a public issue
thread (lhoyer/DAFormer#22, tests/corpus/expected.tsv): the first, decode.loss_seg, is the loss;
NaN from the first line on: the first is recorded, the third in a row marks the device warning.""",
             path="/var/log/training/job-34/worker_2.log", device="2")
    c.add("2022-05-07 17:02:57,696 - mmseg - INFO - Iter [50/40000]        lr: 1.958e-06, eta: 1 day, 0:29:42, time: 2.207, data_time: 0.029, memory: 9801, decode.loss_seg: nan, decode.acc_seg: 32.2611, src.loss_imnet_feat_dist: nan, mix.decode.loss_seg: nan, mix.decode.acc_seg: 54.3771")
    c.expect(NON_FINITE, "NotHandleFault")
    c.add("2022-05-07 17:04:45,225 - mmseg - INFO - Iter [100/40000]       lr: 3.950e-06, eta: 1 day, 0:08:59, time: 2.151, data_time: 0.017, memory: 9801, decode.loss_seg: nan, decode.acc_seg: 41.2013, src.loss_imnet_feat_dist: nan, mix.decode.loss_seg: nan, mix.decode.acc_seg: 69.9605")
    c.add("2022-05-07 17:06:32,717 - mmseg - INFO - Iter [150/40000]       lr: 5.938e-06, eta: 1 day, 0:00:44, time: 2.150, data_time: 0.017, memory: 9801, decode.loss_seg: nan, decode.acc_seg: 41.6272, src.loss_imnet_feat_dist: nan, mix.decode.loss_seg: nan, mix.decode.acc_seg: 69.3706")
    c.expect(NON_FINITE, "SubHealthFault")
    return c


def colossalai_skip():
    c = Case("numerics-colossalai-skip", """
ColossalAI's mixed-precision optimizers logging each skipped step ("Found overflow. Skip step",
the message verbatim from its sources in the code index; the logger prefix is illustrative):
no scale on the line, so each overflow counts, and the third within the window is a storm. The
rule triggers on the skip ("Skip step"), not on "overflow" alone: a scaler's overflow line names
its scale or the step it skips, and every short trigger costs a probe of every byte read.""",
             path="/var/log/training/job-32/worker_5.log", device="5")
    for i in range(3):
        c.add("[11/28/26 10:00:%02d] INFO     colossalai - colossalai - INFO: Found overflow. Skip step" % (10 + i))
    c.expect(STORM, "SubHealthFault")
    return c


def peer_slow():
    c = Case("numerics-peer-slow", """
A torchrun console log (`--tee`: every rank's lines in one file, each after its "[defaultN]:"
prefix, which names the rank) of four ranks printing MindFormers step lines, constructed in
the shape of the numerics-mindformers case's verbatim line. Ranks 0, 1 and 3 run at 1000-1030 ms
a step (normal jitter: quiet); rank 2 runs 30 % slower from its first step, which its own
baseline (slow_step) never sees. device.slow compares it with the median of its three peers and
reports it on its fifth step. The file names no device: the verdict names the rank only.""",
             path="/var/log/training/job-40/console.log", device="")
    for step in range(1, 13):
        for rank in range(4):
            t = (1300 if rank == 2 else 1000) + (step + rank) % 4 * 10
            c.add("[default%d]:2024-06-24 10:00:%02d,000 - mindformers - INFO - { Epoch:[  1/  2], step:[%5d/ 6500], loss: %.3f, per_step_time: %dms, lr: 1e-05, overflow cond: False, loss_scale: 1.0, global_norm: [0.9], train_throughput_per_npu: 2.849T" % (rank, step, step, 2.0 - step * 0.01, t))
            if rank == 2 and step == 5:
                c.expect("device.slow", "SubHealthFault")
    return c


def megatron_straggler_report():
    c = Case("numerics-megatron-straggler", """
Megatron's straggler report (--log-straggler). Line 1 is verbatim from NVIDIA/Megatron-LM
megatron/core/README_STRAGGLER.md line 13 (commit d81c3b15e6fbcb6974edf8d680dab7a497639e6c): 32
ranks of a healthy run, the slowest (rank 0) 0.4 % above the fastest: quiet. The rest are
constructed in its format: rank 30 at 1570.32 ms against a fastest rank at 1200 ms (31 %) in
five reports in a row, with one report between them at 8 % (the run breaks), then five more
in a row: device.slow.megatron-report fires on the fifth. The rank is global (rank 0 prints the
report for the whole job): no rank_device, so the verdict names the rank and no device.""",
             path="/var/log/training/job-41/rank0.log", device="")
    c.add(" 0: INFO:megatron.core.utils:[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | MnPwr/Rnk: 601796W/8 | MxPwr/Rnk: 683801W/18 | MnTmp/Rnk: 52C/0 | MxTmp/Rnk: 65C/21 | MnUtl/Rnk: 97%/8 | MxUtl/Rnk: 100%/6 | MnClk/Rnk: 1950MHz/28 | MxClk/Rnk: 1980MHz/0 | MnDRtt/Rnk: 14.27ms/23 | MxDRtt/Rnk: 34.65ms/3 | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8")
    for i in range(11):
        fastest = "1450.00" if i == 4 else "1200.00"
        c.add(" 0: INFO:megatron.core.utils:[2024-03-15 00:%02d:00] | MnRtt/Rnk: %sms/13 | MxRtt/Rnk: 1570.32ms/30 | MnPwr/Rnk: 617923.00W/0 | MxPwr/Rnk: 669787.00W/20 | MnTmp/Rnk: 50.00C/0 | MxTmp/Rnk: 61.00C/19 | MnUtl/Rnk: 95.00%%/20 | MxUtl/Rnk: 100.00%%/3 | MnClk/Rnk: 1920.00MHz/14 | MxClk/Rnk: 1965.00MHz/0 | MnDRtt/Rnk: 1.22ms/15 | MxDRtt/Rnk: 13.33ms/23 | MnEtpt/Rnk: 560.82TF/30 | MxEtpt/Rnk: 608.83TF/13" % (i, fastest))
        if i == 9:
            c.expect("device.slow.megatron-report", "SubHealthFault")
    return c


for case in (mindspore(), mindformers(), megatron(), deepspeed(), apex(), mindyolo(), hf(),
             stop_messages(), tensorboard(), funasr(), deepspeed_calibration(), deepspeed_stuck(),
             deepspeed_low_scale(), yolact(), paddle_scaler(), colossalai_skip(),
             paddle_dygraph_scaler(), mmseg_namespaced_loss(), peer_slow(),
             megatron_straggler_report()):
    case.write()
