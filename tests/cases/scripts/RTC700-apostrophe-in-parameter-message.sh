# expect: RTC700 5:33
# The apostrophe in the message of ${MODEL:?...} opens a single-quoted string: bash
# pairs quotes inside ${...} even between double quotes, and `bash -n` fails.
export HCCL_IF_IP=10.0.0.6
: "${MODEL:?set MODEL: the model's path}"
vllm serve "$MODEL" --port 8000 -tp 8
