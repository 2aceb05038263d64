/* deltactl_groups.h: the entry point of each deltactl command group except `table` (which
 * has deltactl_table.h). argv[0] is the group name; each returns the process exit code. */
#ifndef DD_CMD_DELTACTL_GROUPS_H
#define DD_CMD_DELTACTL_GROUPS_H

int dctl_catalog_main(int argc, char **argv);    /* deltactl_catalog.c */
int dctl_schema_main(int argc, char **argv);     /* deltactl_schema.c */
int dctl_credential_main(int argc, char **argv); /* deltactl_credential.c */
int dctl_location_main(int argc, char **argv);   /* deltactl_location.c */
int dctl_server_main(int argc, char **argv);     /* deltactl_server.c */
int dctl_share_main(int argc, char **argv);      /* deltactl_share.c */
int dctl_recipient_main(int argc, char **argv);  /* deltactl_share.c */
int dctl_grant_main(int argc, char **argv);      /* deltactl_share.c */
int dctl_completion_main(int argc, char **argv); /* deltactl_completion.c */
int dctl_audit_main(int argc, char **argv);      /* deltactl_admin.c */
int dctl_admin_main(int argc, char **argv);      /* deltactl_admin.c */
/* `share import FILE` (deltactl_share_import.c); argv[0] is "import". */
int dctl_share_import(int argc, char **argv);

#endif
