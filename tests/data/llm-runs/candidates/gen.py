# Writes runs.csv (this folder) from the rows below, with each step's arithmetic. Every figure below was read from the cited source.
import csv, sys, io, os
MB="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/df0289c180dd20ff26933455c7a0a11084f6a36f/docs/performance-summary.md"
MBL3="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/00919dcf1fe13c0acf65e131f244378f0a6cd2b5/scripts/performance/configs/llama/llama3_workload_base_configs.py"
MBL3o="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/0fa501acee1ebfe3d1ab8088b638e2089d800df6/scripts/performance/configs/llama3/workload_base_configs.py"
MBL31="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/0013c9a8ed4d655cd4e8ad8f918b11588e53c85d/scripts/performance/configs/llama/llama31_workload_base_configs.py"
MBL31o="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/0fa501acee1ebfe3d1ab8088b638e2089d800df6/scripts/performance/configs/llama31/workload_base_configs.py"
MBL3PY="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/0a0cb2904642a28c7f43fa321ad63a1af6694e2a/scripts/performance/configs/llama3/llama3_llm_pretrain.py"
MBHELP="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/013284246bc0714e406c8a519b8686b7e50628ec/scripts/performance/utils/helpers.py"
MBREC="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/0d5f5558c16fc7b3eec45698768522e74f1a87a2/src/megatron/bridge/recipes/llama/llama3.py"
MBDS="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/042641823051ce167c52b0ae289941a227c11535/scripts/performance/configs/deepseek/deepseek_workload_base_configs.py"
MBOSS="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/07eea52d4523a69fc8975cef34938d61ae13f9e2/scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py"
MBQW="https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/01b2977e518f0a58ec870daba2fb2c04d76a91b2/scripts/performance/configs/qwen/qwen3_workload_base_configs.py"
TT="https://github.com/pytorch/torchtitan/blob/31a17bfdb70bab6f62a13d21816a5339b911d6e3/benchmarks/llama3_h100_202412_torchtitan.md"
TTH200="https://github.com/pytorch/torchtitan/blob/bcdeaa37c92d1eaceeec3351e7ac81be6a1488af/benchmarks/llama3_8b_h200_2025-06_torchtitan.md"
TT8TOML="https://github.com/pytorch/torchtitan/blob/0011fb905e9561a51af0f265e35d989f7448b1d8/train_configs/llama3_8b.toml"
TT70TOML="https://github.com/pytorch/torchtitan/blob/08e537949f497065e497c88a1797a14a57678239/train_configs/llama3_70b.toml"
TT8TOMLn="https://github.com/pytorch/torchtitan/blob/01424cb254492cd6f5924e26d28227d75913e122/torchtitan/models/llama3/train_configs/llama3_8b.toml"

cols="id,stack,platform,gpus,model,seq,tp,pp,cp,ep,vp,mbs,gbs,sp,recompute,zero,fetch,overlap,tpoverlap,precision,attention,first,last,account,step_s,published,where".split(",")
rows=[]
def add(**k):
    seqlen=k.pop("seqlen"); tps=k.pop("tps"); g=k["gpus"]; gbs=k["gbs"]
    tokens=gbs*seqlen; step=tokens/(tps*g)
    k["step_s"]=f"{step:.3f}"
    k.setdefault("first",""); k.setdefault("last",""); k.setdefault("fetch","")
    k["where"]=k["where"]+f"; step = GBS {gbs} x seq {seqlen} = {tokens} tokens / ({tps} tok/s/GPU x {g} GPUs) = {step:.3f} s"
    k["_arith"]=f"tokens/step = {gbs} x {seqlen} = {tokens}; step_s = {tokens} / ({tps} x {g}) = {tokens} / {tps*g} = {step:.3f} s"
    rows.append(k)

MBCOMMON="Megatron-Bridge perf recipe defaults: distributed optimizer with overlap_grad_reduce/overlap_param_gather ("+MBREC+" llama3 pretrain configs; FLAG: later commit than the table) ; perf overrides apply_rope_fusion, TE cross-entropy fusion, 50 iterations ("+MBHELP+")"
# ---------------- Megatron-Bridge 26.02 ----------------
add(id="mb2602-llama3-70b-fp8cs-gb200-64",stack="megatron-bridge",platform="gb200-nvl72",gpus=64,model="llama3-70b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=256,sp="no",recompute="none",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="fp8-cs",attention="cudnn",account="no",seqlen=8192,tps=4040,
 published="4040 tok/s/GPU; 1815 model TFLOP/s/GPU",
 where=f"{MB} section '26.02 NeMo Container' table 'System: DGX-GB200' row LLAMA3_70B FP8-CS (64 GPUs; GBS 256; MBS 2; seq 8192; FSDP 1; TP 1; PP 1; CP 1; GA 2); preset LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 ({MBL3}): micro_batch_size 2, use_megatron_fsdp True, cpu_offloading_num_layers 40; Megatron-FSDP data_parallel_sharding_strategy optim_grads_params = zero 3 ({MBHELP}); FP8-CS = Transformer Engine FP8 current (per-tensor) scaling with first_last_layers_bf16 False (helpers.py get_precision_config); FLAG: activations of 40 of the 80 layers offloaded to Grace CPU memory (acesim has no activation offload); FLAG: 64 GPUs inside one 72-GPU NVLink domain")
add(id="mb2602-llama3-70b-mxfp8-gb200-64",stack="megatron-bridge",platform="gb200-nvl72",gpus=64,model="llama3-70b",seq="",tp=2,pp=4,cp=1,ep=1,vp=5,mbs=1,gbs=256,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="mxfp8",attention="cudnn",account="no",seqlen=8192,tps=3887,
 published="3887 tok/s/GPU; 1746 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row LLAMA3_70B FP8-MX (64 GPUs; GBS 256; MBS 1; FSDP 0; TP 2; PP 4; CP 1; VP 5; GA 32); preset LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 ({MBL3}): TP 2, PP 4, VP 5; no recompute; {MBL3PY}: tp_comm_overlap_cfg userbuffers_fp8_b200_h8192_tp2_mbs1_seqlen8192 and for fp8_recipe mx overlap_param_gather False (grad reduce still overlapped); MXFP8 = Transformer Engine block scaling (32-element blocks); {MBCOMMON}; 80 layers / (4 x 5) = 4 per chunk")
add(id="mb2602-llama31-405b-fp8cs-gb200-256",stack="megatron-bridge",platform="gb200-nvl72",gpus=256,model="llama3-405b",seq="",tp=4,pp=16,cp=1,ep=1,vp=4,mbs=1,gbs=1536,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="yes",seqlen=8192,tps=793,
 published="793 tok/s/GPU; 2004 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row LLAMA3.1_405B FP8-CS (256 GPUs; GBS 1536; MBS 1; FSDP 0; TP 4; PP 16; CP 1; VP 4; GA 384); preset LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 ({MBL31}): TP 4, PP 16, CP 1, VP 4, use_megatron_fsdp False, cpu_offloading None, no recompute; FP8 current scaling; FLAG account yes inferred: 126 layers do not divide into 16 x 4 = 64 chunks, (126 + embedding + loss) = 128 = 64 x 2 does; FLAG tpoverlap yes assumed (Megatron-Bridge sets userbuffer TP overlap for Llama 70B; the 405B perf script not opened); FLAG: 256 GPUs span 4 NVL72 racks (NVLink domain 72; TP x PP groups cross racks only through PP/DP); {MBCOMMON}")
add(id="mb2602-llama31-405b-mxfp8-gb200-256",stack="megatron-bridge",platform="gb200-nvl72",gpus=256,model="llama3-405b",seq="",tp=4,pp=16,cp=1,ep=1,vp=8,mbs=1,gbs=1536,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="mxfp8",attention="cudnn",account="yes",seqlen=8192,tps=786,
 published="786 tok/s/GPU; 1983 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row LLAMA3.1_405B FP8-MX (256 GPUs; GBS 1536; MBS 1; TP 4; PP 16; CP 1; VP 8; GA 384); preset LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_MX_V2 ({MBL31}): GB200_FP8_MX_V1 (TP 4, VP 8) with PP 16, CP 1; no recompute; FLAG account yes inferred: 128 chunks of one layer need 126 + embedding + loss; FLAG tpoverlap assumed; {MBCOMMON}")
add(id="mb2602-llama3-70b-fp8cs-h100-64",stack="megatron-bridge",platform="hgx-h100",gpus=64,model="llama3-70b",seq="",tp=4,pp=8,cp=1,ep=1,vp=5,mbs=1,gbs=256,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="no",seqlen=8192,tps=1621,
 published="1621 tok/s/GPU; 728 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-H100' row LLAMA3_70B FP8-CS (64 GPUs; GBS 256; MBS 1; FSDP 0; TP 4; PP 8; CP 1; VP 5; GA 128); preset LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V2 ({MBL3}): TP 4, PP 8, VP 5, no recompute; {MBL3PY}: tp_comm_overlap_cfg userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192; FP8 current scaling; 80 layers / (8 x 5) = 2 per chunk; {MBCOMMON}")
add(id="mb2602-llama31-405b-fp8cs-h100-1024",stack="megatron-bridge",platform="hgx-h100",gpus=1024,model="llama3-405b",seq="",tp=8,pp=8,cp=2,ep=1,vp=8,mbs=1,gbs=1536,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="yes",seqlen=8192,tps=311,
 published="311 tok/s/GPU; 784 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-H100' row LLAMA3.1_405B FP8-CS (1024 GPUs; GBS 1536; MBS 1; FSDP 0; TP 8; PP 8; CP 2; VP 8; GA 192); preset LLAMA31_405B_PRETRAIN_CONFIG_H100_FP8_CS_V2 ({MBL31}): V1 (TP 8, PP 8, CP 2, VP 8) with GBS 1536; no recompute; FLAG account yes inferred (126 + 2 = 128 = 64 chunks x 2); FLAG tpoverlap assumed; {MBCOMMON}")
add(id="mb2602-dsv3-mxfp8-gb200-256",stack="megatron-bridge",platform="gb200-nvl72",gpus=256,model="models/deepseek-v3.yaml",seq="",tp=1,pp=4,cp=1,ep=64,vp=4,mbs=1,gbs=4096,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=4096,tps=3955,
 published="3955 tok/s/GPU; 1028 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row DeepSeekV3 FP8-MX (256 GPUs; GBS 4096; MBS 1; seq 4096; FSDP 0; TP 1; PP 4; CP 1; VP 4; EP 64; GA 64); note under the tables: MoE benchmarks force-balance tokens among experts, token-dropless; preset DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2 ({MBDS}): PP 4, VP 4, EP 64, ETP 1, GBS 4096, recompute_modules ['mla_up_proj'] (selective), moe_flex_dispatcher_backend hybridep, moe_a2a_overlap True, full-iteration CUDA graph, cutedsl fused grouped MLP; FLAG: the 26.02 row does not say w/ or w/o MTP: its 1028/3955 = 260 GFLOP/token equals the 25.11 'w/ MTP' B200 row (557/2139 = 260) not the 'w/o MTP' rows (782/3139 = 249), so MTP (1 layer) is probably on; FLAG: pipeline split of 61 layers (+MTP) over 16 chunks not stated (first/last left empty); MLA written as MHA in the yaml; FLAG: 256 GPUs span 4 NVL72 racks and EP 64 stays within a rack only if the EP group is placed so")
add(id="mb2602-dsv3-mxfp8-b200-256",stack="megatron-bridge",platform="hgx-b200",gpus=256,model="models/deepseek-v3.yaml",seq="",tp=1,pp=16,cp=1,ep=8,vp=1,mbs=1,gbs=4096,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=4096,tps=2689,
 published="2689 tok/s/GPU; 699 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-B200' row DeepSeekV3 FP8-MX (256 GPUs; GBS 4096; MBS 1; TP 1; PP 16; CP 1; VP n/a; EP 8; GA 256); preset DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V2 family ({MBDS}): PP 16, EP 8, recompute_modules ['mla_up_proj'], hybridep dispatcher; FLAG: the stored preset's B200_FP8_MX_V2 was later changed to PP 8 / VP 2 / EP 32 (the table's plan is used); FLAG MTP probably on (699/2689 = 260 GFLOP/token, as above); FLAG pipeline split not stated")
add(id="mb2602-gptoss-120b-bf16-gb200-64",stack="megatron-bridge",platform="gb200-nvl72",gpus=64,model="models/gpt-oss-120b.yaml",seq="",tp=1,pp=1,cp=1,ep=64,vp=1,mbs=4,gbs=1280,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="bf16",attention="cudnn",account="no",seqlen=4096,tps=15784,
 published="15784 tok/s/GPU; 428 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row GPT OSS 120B BF16 (64 GPUs; GBS 1280; MBS 4; seq 4096; FSDP 0; TP 1; PP 1; CP 1; EP 64; GA 5); preset GPT_OSS_120B_PRETRAIN_CONFIG_GB200_BF16_V2 ({MBOSS}): EP 64, MBS 4, GBS 1280, recompute_modules ['layernorm','moe_act'] (selective), moe_a2a_overlap True; force-balanced dropless routing; FLAG: sliding-window (128) attention on every other layer and learnable attention sinks (gpt_oss_provider.py) not modelled; attention backend = TE fused sink attention (TE >= 2.8) written cudnn")
add(id="mb2602-gptoss-120b-bf16-b200-64",stack="megatron-bridge",platform="hgx-b200",gpus=64,model="models/gpt-oss-120b.yaml",seq="",tp=1,pp=1,cp=1,ep=64,vp=1,mbs=4,gbs=1280,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="bf16",attention="cudnn",account="no",seqlen=4096,tps=8047,
 published="8047 tok/s/GPU; 219 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-B200' row GPT OSS 120B BF16 (64 GPUs; GBS 1280; MBS 4; TP 1; PP 1; CP 1; EP 64; GA 5); preset GPT_OSS_120B_PRETRAIN_CONFIG_B200_BF16_V1 ({MBOSS}): EP 64, MBS 4, recompute_modules ['layernorm','moe_act']; FLAG: the stored V2 preset sets EP 8 for B200 (a later change; the table's EP 64 is used); EP 64 crosses 8 nodes over InfiniBand; FLAG sliding window + sinks as above")
add(id="mb2602-gptoss-120b-bf16-h100-64",stack="megatron-bridge",platform="hgx-h100",gpus=64,model="models/gpt-oss-120b.yaml",seq="",tp=1,pp=4,cp=1,ep=8,vp=1,mbs=1,gbs=1280,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="bf16",attention="cudnn",account="no",seqlen=4096,tps=5993,
 published="5993 tok/s/GPU; 163 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-H100' row GPT OSS 120B BF16 (64 GPUs; GBS 1280; MBS 1; TP 1; PP 4; CP 1; VP n/a; EP 8; GA 80); preset GPT_OSS_120B_PRETRAIN_CONFIG_H100_BF16_V2 ({MBOSS}): PP 4, EP 8, MBS 1, GBS 1280, recompute_modules ['layernorm','moe_act']; 36 layers / 4 = 9 per stage; FLAG sliding window + sinks")
add(id="mb2602-qwen3-30b-a3b-mxfp8-gb200-8",stack="megatron-bridge",platform="gb200-nvl72",gpus=8,model="models/qwen3-30b-a3b.yaml",seq="",tp=1,pp=1,cp=1,ep=8,vp=1,mbs=4,gbs=512,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=4096,tps=26084,
 published="26084 tok/s/GPU; 600 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row Qwen3_30B_a3B FP8-MX (8 GPUs; GBS 512; MBS 4; seq 4096; TP 1; PP 1; CP 1; EP 8; GA 16); preset QWEN3_30B_A3B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 ({MBQW}): MBS 4, EP 8, hybridep dispatcher, TE CUDA graphs on router/preprocess, no recompute_modules; force-balanced dropless routing; 8 GPUs = 2 GB200 trays inside one NVL72 domain")
add(id="mb2602-qwen3-235b-a22b-mxfp8-gb200-256",stack="megatron-bridge",platform="gb200-nvl72",gpus=256,model="models/qwen3-235b-a22b.yaml",seq="",tp=1,pp=8,cp=1,ep=32,vp=1,mbs=1,gbs=8192,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="yes",seqlen=4096,tps=5448,
 published="5448 tok/s/GPU; 806 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-GB200' row Qwen3_235B_a22B FP8-MX (256 GPUs; GBS 8192; MBS 1; TP 1; PP 8; CP 1; VP n/a; EP 32; GA 256); preset QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 ({MBQW}): PP 8, EP 32, GBS 8192, no recompute_modules (FLAG: the stored FP8_MX_V2 adds VP 3, the 26.02 table says VP n/a; the table is used); FLAG account yes: 94 layers + embedding + loss = 96 = 8 x 12 (Megatron-Bridge's Qwen3-235B recipes set account_for_embedding/loss_in_pipeline_split True 'required for 235B model')")
add(id="mb2602-qwen3-30b-a3b-mxfp8-b200-8",stack="megatron-bridge",platform="hgx-b200",gpus=8,model="models/qwen3-30b-a3b.yaml",seq="",tp=1,pp=1,cp=1,ep=8,vp=1,mbs=1,gbs=512,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=4096,tps=9691,
 published="9691 tok/s/GPU; 223 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-B200' row Qwen3_30B_a3B FP8-MX (8 GPUs; GBS 512; MBS 1; EP 8; GA 64); FLAG: the stored preset QWEN3_30B_A3B_PRETRAIN_CONFIG_B200_FP8_MX_V1 ({MBQW}) says MBS 4 (the table's MBS 1 is used); no recompute_modules; hybridep dispatcher")
add(id="mb2602-qwen3-235b-a22b-mxfp8-b200-256",stack="megatron-bridge",platform="hgx-b200",gpus=256,model="models/qwen3-235b-a22b.yaml",seq="",tp=1,pp=8,cp=1,ep=8,vp=1,mbs=1,gbs=8192,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="yes",seqlen=4096,tps=3805,
 published="3805 tok/s/GPU; 563 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-B200' row Qwen3_235B_a22B FP8-MX (256 GPUs; GBS 8192; MBS 1; TP 1; PP 8; VP n/a; EP 8; GA 256); preset QWEN3_235B_A22B_PRETRAIN_CONFIG_B200_FP8_CS_V2 ({MBQW}): PP 8, EP 8, alltoall dispatcher, moe_a2a_overlap False, no recompute; FLAG account yes as above")
add(id="mb2602-qwen3-235b-a22b-fp8cs-h100-256",stack="megatron-bridge",platform="hgx-h100",gpus=256,model="models/qwen3-235b-a22b.yaml",seq="",tp=2,pp=8,cp=1,ep=32,vp=4,mbs=1,gbs=8192,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="yes",seqlen=4096,tps=1633,
 published="1633 tok/s/GPU; 242 model TFLOP/s/GPU",
 where=f"{MB} 26.02 table 'System: DGX-H100' row Qwen3_235B_a22B FP8-CS (256 GPUs; GBS 8192; MBS 1; TP 2; PP 8; CP 1; VP 4; EP 32; GA 512); preset QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2 ({MBQW}): TP 2, PP 8, VP 4, EP 32, ETP 1, GBS 8192, moe_a2a_overlap True (EP all-to-all overlapped with compute), no recompute; FLAG account yes (96 = 32 chunks x 3); FLAG tpoverlap yes assumed (TP 2 with SP); EP 32 spans 4 nodes over InfiniBand")
# ---------------- Megatron-Bridge 25.11 ----------------
MB11=" section '25.11 NeMo Container'"
add(id="mb2511-llama3-8b-fp8cs-gb200-8",stack="megatron-bridge",platform="gb200-nvl72",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=128,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="fp8-cs",attention="cudnn",account="no",seqlen=8192,tps=31508,
 published="31508 tok/s/GPU; 1622 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-GB200' row LLAMA3_8B FP8-CS (8 GPUs; GBS 128; MBS 2; seq 8192; FSDP 0; TP 1; PP 1; CP 1; GA 8); preset LLAMA3_8B_GB200_FP8_CS_BASE_CONFIG ({MBL3o}): MBS 2; no recompute; {MBL3PY}: tp_comm_overlap only if TP > 1 (off); FP8 current scaling; {MBCOMMON}")
add(id="mb2511-llama3-8b-mxfp8-gb200-8",stack="megatron-bridge",platform="gb200-nvl72",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=128,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=8192,tps=29789,
 published="29789 tok/s/GPU; 1533 model TFLOP/s/GPU (the parenthesised FP8-MX figures)",
 where=f"{MB}{MB11} table 'System: DGX-GB200' row LLAMA3_8B 'FP8-CS (FP8-MX)' parenthesised values (8 GPUs; GBS 128; MBS 2; TP 1; PP 1; CP 1; GA 8); preset LLAMA3_8B_GB200_FP8_MX_BASE_CONFIG ({MBL3o}): MBS 2, CUDA graph local full_iteration; no recompute; the page's note: on GB200/B200 the parenthesised numbers use 32x32 quantisation granularity (MXFP8 block scaling); {MBCOMMON}")
add(id="mb2511-llama3-8b-fp8cs-b200-8",stack="megatron-bridge",platform="hgx-b200",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=128,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="fp8-cs",attention="cudnn",account="no",seqlen=8192,tps=30624,
 published="30624 tok/s/GPU; 1576 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-B200' row LLAMA3_8B FP8-CS (8 GPUs; GBS 128; MBS 2; TP 1; PP 1; CP 1; GA 8); preset LLAMA3_8B_B200_FP8_CS_BASE_CONFIG ({MBL3o}): MBS 2, CUDA graph local full_iteration; no recompute; {MBCOMMON}")
add(id="mb2511-llama3-8b-mxfp8-b200-8",stack="megatron-bridge",platform="hgx-b200",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=128,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=8192,tps=29521,
 published="29521 tok/s/GPU; 1519 model TFLOP/s/GPU (parenthesised FP8-MX)",
 where=f"{MB}{MB11} table 'System: DGX-B200' row LLAMA3_8B parenthesised FP8-MX values; preset LLAMA3_8B_B200_FP8_MX_BASE_CONFIG = FP8_CS base ({MBL3o}); {MBCOMMON}")
add(id="mb2511-llama3-8b-fp8cs-h100-8",stack="megatron-bridge",platform="hgx-h100",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=1,gbs=128,sp="no",recompute="none",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="fp8-cs",attention="cudnn",account="no",seqlen=8192,tps=14451,
 published="14451 tok/s/GPU; 744 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-H100' row LLAMA3_8B FP8-CS (8 GPUs; GBS 128; MBS 1; FSDP 1; TP 1; PP 1; CP 1; GA 16); preset LLAMA3_8B_H100_FP8_CS_BASE_CONFIG ({MBL3o}): use_megatron_fsdp True (CP from the base: 1, matching the table); {MBL3PY}: with Megatron-FSDP nccl_ub True, keep_fp8_transpose_cache True; Megatron-FSDP optim_grads_params = zero 3 ({MBHELP}); FLAG: the later preset ({MBL3}) changed this config to recompute_num_layers 5 without FSDP; the 25.11-era preset (no recompute) is used")
add(id="mb2511-llama3-70b-fp8cs-h100-64",stack="megatron-bridge",platform="hgx-h100",gpus=64,model="llama3-70b",seq="",tp=4,pp=8,cp=1,ep=1,vp=5,mbs=1,gbs=128,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="no",seqlen=8192,tps=1602,
 published="1602 tok/s/GPU; 719 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-H100' row LLAMA3_70B FP8-CS (64 GPUs; GBS 128; MBS 1; FSDP 0; TP 4; PP 8; CP 1; VP 5; GA 64); preset LLAMA3_70B_H100_FP8_CS_BASE_CONFIG ({MBL3o}): TP 4, PP 8, VP 5, GBS 128; {MBL3PY}: userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192 TP overlap; no recompute; {MBCOMMON}")
add(id="mb2511-llama31-405b-fp8cs-h100-1024",stack="megatron-bridge",platform="hgx-h100",gpus=1024,model="llama3-405b",seq="",tp=8,pp=8,cp=2,ep=1,vp=8,mbs=1,gbs=512,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="yes",seqlen=8192,tps=292,
 published="292 tok/s/GPU; 737 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-H100' row LLAMA3.1_405B FP8-CS (1024 GPUs; GBS 512; MBS 1; TP 8; PP 8; CP 2; VP 8; GA 64); preset LLAMA31_405B_H100_FP8_CS_BASE_CONFIG ({MBL31o}): TP 8, PP 8, CP 2, VP 8, GBS 512; no recompute; FLAG account yes inferred; FLAG tpoverlap assumed; {MBCOMMON}")
add(id="mb2511-llama31-405b-fp8cs-b200-128",stack="megatron-bridge",platform="hgx-b200",gpus=128,model="llama3-405b",seq="",tp=4,pp=8,cp=2,ep=1,vp=8,mbs=1,gbs=64,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="yes",seqlen=8192,tps=661,
 published="661 tok/s/GPU; 1667 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-B200' row LLAMA3.1_405B FP8-CS (128 GPUs; GBS 64; MBS 1; FSDP 0; TP 4; PP 8; CP 2; VP 8; GA 32); preset LLAMA31_405B_B200_FP8_CS_BASE_CONFIG ({MBL31o}): TP 4, PP 8, CP 2, VP 8, GBS 64; no recompute; FLAG account yes inferred; FLAG tpoverlap assumed; {MBCOMMON}")
add(id="mb2511-llama31-405b-mxfp8-b200-128",stack="megatron-bridge",platform="hgx-b200",gpus=128,model="llama3-405b",seq="",tp=4,pp=8,cp=2,ep=1,vp=8,mbs=1,gbs=64,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="mxfp8",attention="cudnn",account="yes",seqlen=8192,tps=624,
 published="624 tok/s/GPU; 1576 model TFLOP/s/GPU (parenthesised FP8-MX)",
 where=f"{MB}{MB11} table 'System: DGX-B200' row LLAMA3.1_405B parenthesised FP8-MX values; preset LLAMA31_405B_B200_FP8_MX_BASE_CONFIG = FP8_CS ({MBL31o}); FLAG account yes inferred; FLAG tpoverlap assumed; {MBCOMMON}")
add(id="mb2511-dsv3-bf16-gb200-256",stack="megatron-bridge",platform="gb200-nvl72",gpus=256,model="models/deepseek-v3.yaml",seq="",tp=1,pp=4,cp=1,ep=64,vp=4,mbs=1,gbs=4096,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="bf16",attention="cudnn",account="no",seqlen=4096,tps=3139,
 published="3139 tok/s/GPU; 782 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-GB200' row 'DeepSeekV3 (w/o MTP)' BF16 (256 GPUs; GBS 4096; MBS 1; seq 4096; TP 1; PP 4; CP 1; VP 4; EP 64; GA 64); preset DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_BF16_V2 ({MBDS}): PP 4, VP 4, EP 64, GBS 4096, recompute_modules ['mla_up_proj'], hybridep dispatcher, moe_a2a_overlap False, TE CUDA graphs on attn/router/preprocess; no MTP (row label); FLAG pipeline split of 61 layers over 16 chunks not stated")
add(id="mb2511-dsv3-mxfp8-b200-256-mtp",stack="megatron-bridge",platform="hgx-b200",gpus=256,model="models/deepseek-v3.yaml",seq="",tp=1,pp=16,cp=1,ep=8,vp=1,mbs=1,gbs=2048,sp="no",recompute="selective",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="no",seqlen=4096,tps=2139,
 published="2139 tok/s/GPU; 557 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-B200' row 'DeepSeekV3 (w/ MTP)' FP8-MX (256 GPUs; GBS 2048; MBS 1; TP 1; PP 16; CP 1; VP 1; EP 8; GA 128); preset DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1 ({MBDS}): PP 16, EP 8, GBS 2048, recompute_modules ['mla_up_proj'], hybridep; multi-token prediction (1 MTP layer) on per the row label; FLAG pipeline split not stated")
add(id="mb2511-qwen3-30b-a3b-fp8cs-h100-16",stack="megatron-bridge",platform="hgx-h100",gpus=16,model="models/qwen3-30b-a3b.yaml",seq="",tp=1,pp=2,cp=1,ep=8,vp=24,mbs=2,gbs=512,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="fp8-cs",attention="cudnn",account="no",seqlen=4096,tps=5275,
 published="5275 tok/s/GPU; 121 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-H100' row Qwen3_30B_a3B FP8-CS (16 GPUs; GBS 512; MBS 2; TP 1; PP 2; CP 1; VP 24; EP 8; GA 32); 48 layers / (2 x 24) = 1 per chunk; FLAG recompute none: the stored presets ({MBQW}) have no recompute_modules for Qwen3-30B but the stored H100 preset is a later plan (EP 16, no PP); FP8 current scaling; EP 8 inside one node")
add(id="mb2511-qwen3-235b-a22b-fp8cs-h100-256",stack="megatron-bridge",platform="hgx-h100",gpus=256,model="models/qwen3-235b-a22b.yaml",seq="",tp=2,pp=8,cp=1,ep=32,vp=4,mbs=1,gbs=2048,sp="yes",recompute="none",zero=1,overlap="yes",tpoverlap="yes",precision="fp8-cs",attention="cudnn",account="yes",seqlen=4096,tps=1575,
 published="1575 tok/s/GPU; 233 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-H100' row Qwen3_235B_a22B FP8-CS (256 GPUs; GBS 2048; MBS 1; TP 2; PP 8; CP 1; VP 4; EP 32; GA 128); preset QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V1 ({MBQW}): TP 2, PP 8, VP 4, EP 32, GBS 2048, moe_a2a_overlap True, no recompute; FLAG account yes (96 = 32 x 3); FLAG tpoverlap assumed")
add(id="mb2511-qwen3-235b-a22b-mxfp8-b200-64",stack="megatron-bridge",platform="hgx-b200",gpus=64,model="models/qwen3-235b-a22b.yaml",seq="",tp=1,pp=8,cp=1,ep=8,vp=2,mbs=1,gbs=1024,sp="no",recompute="none",zero=1,overlap="yes",tpoverlap="no",precision="mxfp8",attention="cudnn",account="yes",seqlen=4096,tps=3269,
 published="3269 tok/s/GPU; 484 model TFLOP/s/GPU",
 where=f"{MB}{MB11} table 'System: DGX-B200' row Qwen3_235B_a22B FP8-MX (64 GPUs; GBS 1024; MBS 1; TP 1; PP 8; CP 1; VP 2; EP 8; GA 128); preset QWEN3_235B_A22B_PRETRAIN_CONFIG_B200_FP8_CS_V1 ({MBQW}) has PP 8 / EP 8 / GBS 1024 but no VP (the table's VP 2 is used); alltoall dispatcher; no recompute; FLAG account yes (96 = 16 x 6)")
# ---------------- torchtitan ----------------
TTCOMMON="Grand Teton: 8 H100 per host on NVLink, H100 96GB HBM2e 2.4 TB/s at the default 500 W limit, 400 Gb/s RDMA per GPU (FLAG: not acesim's hgx-h100 80GB/700 W); TPS/GPU read at iteration 90; torch 1963fc8, torchao eab345c, torchtitan 9dec370 (2024-12); FSDP2 full shard = zero 3 with prefetch; attention = PyTorch SDPA (FlashAttention-2 kernel on H100, written fa2)"
add(id="tt-llama31-8b-bf16-fsdp-8",stack="torchtitan",platform="hgx-h100",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=16,sp="no",recompute="selective",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="bf16",attention="fa2",account="no",seqlen=8192,tps=5762,
 published="5762 TPS/GPU; 82.4 GiB",
 where=f"{TT} Table 1 (FSDP; Llama 3.1 8B; 8 GPUs; local batch 2; global batch 16; selective activation checkpointing) row 'FSDP'; eager (no torch.compile); seq 8192 and selective AC mode op from train_configs/llama3_8b.toml ({TT8TOML}; FLAG: a stored version near but not at 9dec370); {TTCOMMON}")
add(id="tt-llama31-8b-fp8-fsdp-8",stack="torchtitan",platform="hgx-h100",gpus=8,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=16,sp="no",recompute="selective",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="fp8-cs",attention="fa2",account="no",seqlen=8192,tps=8532,
 published="8532 TPS/GPU; 76.8 GiB",
 where=f"{TT} Table 1 row 'FSDP + torch.compile + Float8' (8 GPUs; local batch 2; global batch 16; selective AC); torchao float8 (tensorwise dynamic scaling on nn.Linear); FLAG: whether FP8 all-gather was enabled is not stated; torch.compile on; seq 8192 ({TT8TOML}); {TTCOMMON}")
add(id="tt-llama31-8b-bf16-fsdp-128",stack="torchtitan",platform="hgx-h100",gpus=128,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=256,sp="no",recompute="selective",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="bf16",attention="fa2",account="no",seqlen=8192,tps=5605,
 published="5605 TPS/GPU; 67.0 GiB",
 where=f"{TT} Table 3 (FSDP; Llama 3.1 8B; 128 GPUs; local batch 2; global batch 256; selective AC) row 'FSDP'; eager; seq 8192 ({TT8TOML}); {TTCOMMON}")
add(id="tt-llama31-8b-fp8-fsdp-128",stack="torchtitan",platform="hgx-h100",gpus=128,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=256,sp="no",recompute="selective",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="fp8-cs",attention="fa2",account="no",seqlen=8192,tps=8380,
 published="8380 TPS/GPU; 61.8 GiB",
 where=f"{TT} Table 3 row 'FSDP + torch.compile + Float8' (128 GPUs; local batch 2; global batch 256; selective AC); torchao float8; torch.compile; seq 8192; {TTCOMMON}")
for fs,cpd,sl,tps,mem in [(8,1,32768,3890,83.9),(4,2,65536,2540,84.2),(2,4,131072,1071,84.0),(1,8,262144,548,84.5)]:
    add(id=f"tt-llama31-8b-fp8-cp{cpd}-seq{sl//1024}k-8",stack="torchtitan",platform="hgx-h100",gpus=8,model="llama3-8b",seq=sl,tp=1,pp=1,cp=cpd,ep=1,vp=1,mbs=1,gbs=fs,sp="no",recompute="full",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="fp8-cs",attention="fa2",account="no",seqlen=sl,tps=tps,
     published=f"{tps} TPS/GPU; {mem} GiB",
     where=f"{TT} Table 2 (FSDP + CP + torch.compile + Float8; Llama 3.1 8B; 8 GPUs; local batch 1; full AC) row 'FSDP {fs}, CP {cpd}' sequence {sl}; global batch = local batch 1 x FSDP degree {fs} = {fs} sequences (the CP ranks share a sequence); FLAG: PyTorch's experimental context_parallel (ring attention over SDPA), not Megatron's CP; {TTCOMMON}")
for name,tps,mem,tpo in [("2D",829,71.9,"no"),("2D + AsyncTP",876,67.6,"yes")]:
    add(id="tt-llama31-70b-fp8-tp8"+("-asynctp" if tpo=="yes" else "")+"-256",stack="torchtitan",platform="hgx-h100",gpus=256,model="llama3-70b",seq="",tp=8,pp=1,cp=1,ep=1,vp=1,mbs=16,gbs=512,sp="yes",recompute="full",zero=3,fetch="prefetch",overlap="no",tpoverlap=tpo,precision="fp8-cs",attention="fa2",account="no",seqlen=8192,tps=tps,
     published=f"{tps} TPS/GPU; {mem} GiB",
     where=f"{TT} Table 4 (FSDP + TP + torch.compile + Float8; Llama 3.1 70B; 256 GPUs = FSDP 32 x TP 8; local batch 16; global batch 512; full AC) row '{name}'; no gradient accumulation in torchtitan (micro-batch = local batch 16); TP with sequence-parallel norms (torchtitan's TP plan); seq 8192 from train_configs/llama3_70b.toml ({TT70TOML}); "+("async TP = torch symmetric-memory micro-pipelined all-gather/reduce-scatter with the TP matmuls (FLAG: tpoverlap yes approximates it with Megatron's --tp-comm-overlap); " if tpo=="yes" else "")+f"FLAG: float8 tensorwise with TP; {TTCOMMON}")
TTH="Trainy on WhiteFiber: 8 H200 per host on NVLink, 400 Gb/s CX-7 per GPU; torch 2.8.0a0+5228986c39 (NGC 25.05), torchao 0afa4c1, torchtitan e7c0cae (2025-06-13); TPS sampled at iteration 100; command line: --training.local_batch_size=2 --training.compile --model.converters=float8 --float8.enable_fsdp_float8_all_gather --float8.precompute_float8_dynamic_scale_for_fsdp --float8.force_recompute_fp8_weight_in_bwd; FSDP over all ranks (data_parallel_shard_degree -1) = zero 3; seq 8192 and selective op AC from torchtitan/models/llama3/train_configs/llama3_8b.toml ("+TT8TOMLn+"; FLAG: a stored version, not e7c0cae); attention SDPA (fa2)"
for nn,tps,mem in [(4,10938,47.96),(8,10753,46.97)]:
    g=nn*8
    add(id=f"tt-llama31-8b-fp8-fsdp-h200-{g}",stack="torchtitan",platform="hgx-h200",gpus=g,model="llama3-8b",seq="",tp=1,pp=1,cp=1,ep=1,vp=1,mbs=2,gbs=2*g,sp="no",recompute="selective",zero=3,fetch="prefetch",overlap="no",tpoverlap="no",precision="fp8-cs",attention="fa2",account="no",seqlen=8192,tps=tps,
     published=f"{tps} TPS/GPU; {mem} GiB",
     where=f"{TTH200} Results table row NUM_NODES {nn} ({g} GPUs); global batch = local batch 2 x {g} = {2*g}; {TTH}")

# Rows that run with acesim's features moved to ../runs.csv (its validation table); the rest stay here.
MOVED={"mb2602-llama3-70b-fp8cs-h100-64","mb2602-llama31-405b-fp8cs-h100-1024","mb2511-llama3-8b-fp8cs-b200-8","mb2511-llama3-8b-fp8cs-h100-8",
       "mb2511-llama3-70b-fp8cs-h100-64","mb2511-llama31-405b-fp8cs-h100-1024","mb2511-llama31-405b-fp8cs-b200-128",
       "tt-llama31-8b-fp8-fsdp-h200-32","tt-llama31-8b-fp8-fsdp-h200-64",
       "mb2602-llama31-405b-fp8cs-gb200-256","mb2511-llama3-8b-fp8cs-gb200-8",
       "mb2602-llama3-70b-mxfp8-gb200-64","mb2602-llama31-405b-mxfp8-gb200-256","mb2511-llama3-8b-mxfp8-gb200-8",
       "mb2511-llama3-8b-mxfp8-b200-8","mb2511-llama31-405b-mxfp8-b200-128"}
moved=[r for r in rows if r["id"] in MOVED]
rows=[r for r in rows if r["id"] not in MOVED]
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),"runs.csv"),"w",newline="") as f:
    f.write("# Candidate rows for tests/data/llm-runs/runs.csv, not yet run: each needs a feature named in README.md; columns as runs.csv's '# columns:' line; precision adds mxfp8 (MXFP8 block scaling); stacks add megatron-bridge (NeMo 25.11/26.02 containers, Megatron-Core) and torchtitan. Notes per row: README.md.\n")
    w=csv.writer(f,lineterminator="\n")
    w.writerow(cols)
    for r in rows: w.writerow([r[c] for c in cols])
# With --moved, the moved rows as ../runs.csv holds them, on stdout (its rows are these, in this order, after its own).
if "--moved" in sys.argv:
    w=csv.writer(sys.stdout,lineterminator="\n")
    for r in moved: w.writerow([r[c] for c in cols])
    sys.exit(0)
print(len(rows))
