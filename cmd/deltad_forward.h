/* deltad_forward.h: starts the --spark-connect forwarder (server/service/connect_forward.h)
 * with the configuration's rules and a dd_client transport. */
#ifndef DD_CMD_DELTAD_FORWARD_H
#define DD_CMD_DELTAD_FORWARD_H

#include "cmd/deltad_config.h"

/* Nothing when --spark-connect is not set; DD_EINVAL on a bad target or operation. */
int dd_forward_start(const dd_config *cfg);
void dd_forward_stop(void);

#endif
