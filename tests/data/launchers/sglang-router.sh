#!/bin/bash
# the SGLang router in front of a prefill and a decode server (no devices of its own)
python3 -m sglang_router.launch_router --pd-disaggregation \
  --prefill http://10.1.0.1:8000 8995 --decode http://10.1.0.2:8000 \
  --host 0.0.0.0 --port 8080
