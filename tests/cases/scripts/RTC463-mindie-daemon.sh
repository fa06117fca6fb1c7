# expect: RTC463 7:1
# A MindIE Server node (as rtc writes pd-mindie-a2's): the daemon reads its parallel sizes
# and ports from config.json, so lint reads the env but does not lift the launch.
export HCCL_IF_IP=10.0.0.6
export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export RANK_TABLE_FILE=/etc/hccl.json
/usr/local/Ascend/mindie/latest/mindie-service/bin/mindieservice_daemon
