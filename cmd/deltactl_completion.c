/* deltactl_completion.c: `deltactl completion bash|zsh` prints a shell completion script.
 * The scripts ask deltactl itself for the words (`deltactl --help`, `deltactl GROUP
 * --help`, `deltactl GROUP VERB --help`), so they list exactly the groups, verbs and
 * flags the installed binary has. */
#include <stdio.h>
#include <string.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"

static const char USAGE[] =
    "usage: deltactl completion bash|zsh\n"
    "  prints a completion script; load it with\n"
    "    source <(deltactl completion bash)        # bash (or put it in ~/.bashrc)\n"
    "    source <(deltactl completion zsh)         # zsh (after compinit)\n";

/* The words: groups from "groups:", verbs from "verbs:" (two-space indented names), and
 * flags (--name) from a verb's usage. */
static const char BASH[] =
    "# deltactl completion for bash: source <(deltactl completion bash)\n"
    "_deltactl_words() {  # MODE (groups|verbs|flags) DELTACTL WORDS...\n"
    "  local mode=$1 help; shift\n"
    "  help=$(\"$@\" --help 2>/dev/null) || return\n"
    "  case $mode in\n"
    "    groups) printf '%s\\n' \"$help\" | awk '/^groups:/{f=1;next} /^[^ ]/{f=0} f&&/^  [a-z]/{print $1}' ;;\n"
    "    verbs) printf '%s\\n' \"$help\" | awk '/^verbs:/{f=1;next} /^[^ ]/{f=0} f&&/^  [a-z]/{print $1}' ;;\n"
    "    *) printf '%s\\n' \"$help\" | grep -o -- '--[a-z][a-z-]*' | sort -u ;;\n"
    "  esac\n"
    "}\n"
    "_deltactl() {\n"
    "  local cur=${COMP_WORDS[COMP_CWORD]} i w words=()\n"
    "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    "    w=${COMP_WORDS[i]}\n"
    "    case $w in\n"
    "      --server|--token|--token-file|--output|-o|--timeout|--tls-ca-file|--tls-cert-file|--tls-key-file)\n"
    "        [ ${#words[@]} -eq 0 ] && ((i++)) ;;\n"
    "      -*) ;;\n"
    "      *) [ ${#words[@]} -lt 2 ] && words+=(\"$w\") ;;\n"
    "    esac\n"
    "  done\n"
    "  case ${COMP_WORDS[COMP_CWORD-1]} in\n"
    "    --output|-o) COMPREPLY=($(compgen -W 'table json jsonl csv' -- \"$cur\")); return ;;\n"
    "  esac\n"
    "  if [[ $cur == -* ]]; then\n"
    "    COMPREPLY=($(compgen -W \"$(_deltactl_words flags \"${COMP_WORDS[0]}\" \"${words[@]}\")\" -- \"$cur\"))\n"
    "  elif [ ${#words[@]} -eq 0 ]; then\n"
    "    COMPREPLY=($(compgen -W \"$(_deltactl_words groups \"${COMP_WORDS[0]}\") help\" -- \"$cur\"))\n"
    "  elif [ ${#words[@]} -eq 1 ]; then\n"
    "    COMPREPLY=($(compgen -W \"$(_deltactl_words verbs \"${COMP_WORDS[0]}\" \"${words[0]}\")\" -- \"$cur\"))\n"
    "  fi\n"
    "}\n"
    "complete -o default -F _deltactl deltactl\n";

/* zsh runs the bash function through bashcompinit: one script, one set of rules. */
static const char ZSH[] =
    "# deltactl completion for zsh: source <(deltactl completion zsh)\n"
    "autoload -U +X bashcompinit && bashcompinit\n";

int dctl_completion_main(int argc, char **argv) {
  const char *pos[1];
  int npos;
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {USAGE, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  if (!strcmp(pos[0], "bash")) fputs(BASH, stdout);
  else if (!strcmp(pos[0], "zsh")) printf("%s%s", ZSH, BASH);
  else return dctl_usage_error(USAGE, "completion: the shell is bash or zsh, not '%s'", pos[0]);
  return 0;
}
