python -m sglang_router.launch_router \
  --pd-disaggregation \
  --prefill http://10.1.0.5:30000 9000 \
  --decode http://10.1.0.5:30001 \
  --host 0.0.0.0 --port 8000
