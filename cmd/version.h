/* version.h: the version of deltad and deltactl (one number for both programs). */
#ifndef DD_CMD_VERSION_H
#define DD_CMD_VERSION_H

#define DELTAD_VERSION "0.1.0"

#endif
