/* rec.c - driving the recorder (rec.h). */
#include "record/rec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int rec_temp(char *buf, size_t n, const char *suffix, const char *who)
{
    const char *d = getenv("TMPDIR");
    snprintf(buf, n, "%s/fakegc-record-XXXXXX%s", d && *d ? d : "/tmp", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    if (fd < 0) {
        fprintf(stderr, "%s: cannot make a temporary file in %s: %s\n", who,
                d && *d ? d : "/tmp", strerror(errno));
        buf[0] = '\0';
        return -1;
    }
    close(fd);
    return 0;
}

/* Fork and exec the recorder; its raw exit status (128 + N for a signal),
 * or -1 when it could not start. */
static int spawn(const rec_job *j, const char *status_path, const char *who)
{
    size_t n = 0;
    char **cmd = calloc(6 + j->nopts + j->nprog, sizeof *cmd);
    if (!cmd)
        return -1;
    cmd[n++] = (char *)j->python;
    cmd[n++] = (char *)j->recorder;
    cmd[n++] = (char *)"-o";
    cmd[n++] = (char *)j->out;
    for (size_t k = 0; k < j->nopts; k++)
        cmd[n++] = (char *)j->opts[k];
    cmd[n++] = (char *)"--";
    for (size_t k = 0; k < j->nprog; k++)
        cmd[n++] = j->prog[k];
    cmd[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(2, 1);   /* the program's output must not mix with the report */
        setenv("FAKEGC_RECORD_STATUS", status_path, 1);
        execv(j->python, cmd);
        fprintf(stderr, "%s: %s: %s\n", who, j->python, strerror(errno));
        _exit(127);
    }
    free(cmd);
    if (pid < 0)
        return -1;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED(status))
        return REC_SIGNAL + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* The recorder's status rs with the status file's words: the program's own
 * exit status, or REC_FAILED when the recorder itself failed. */
static int with_status_file(int rs, const char *path)
{
    int program = -1;
    char state[32] = "";
    FILE *sf = fopen(path, "r");
    if (sf) {
        if (fscanf(sf, "program %d recorder %31s", &program, state) != 2)
            program = -1;
        fclose(sf);
    }
    unlink(path);
    if (program < 0 || rs == REC_NO_TORCH || rs == REC_NO_PYTHON)
        return rs;
    if (strcmp(state, "ok") == 0)
        return program == 3 ? REC_PROGRAM_3 : program;
    return REC_FAILED;
}

int rec_run(const rec_job *j, const char *who)
{
    char stf[4096];
    if (rec_temp(stf, sizeof stf, "", who) < 0)
        return REC_NO_STATUS;
    return with_status_file(spawn(j, stf, who), stf);
}

void rec_tell(int rs, const rec_job *j, const char *who, int *have, int *internal)
{
    const char *prog = j->nprog ? j->prog[0] : "the program";
    *internal = 0;
    if (rs == REC_NO_STATUS) {
        *internal = 1;   /* said by rec_run */
        *have = 0;
    } else if (rs < 0 || rs == REC_NO_PYTHON) {
        fprintf(stderr, "%s: could not run the recorder with %s\n", who, j->python);
        *internal = 1;
    } else if (rs == REC_NO_TORCH) {
        fprintf(stderr, "%s: torch is not importable by %s (use --python with the Python "
                        "that has PyTorch 1.13.1)\n", who, j->python);
        *internal = 1;
        *have = 0;
    } else if (rs == REC_FAILED) {
        fprintf(stderr, "%s: the recorder failed (see the recording's header); judging "
                        "what was recorded up to there\n", who);
        *internal = 1;
    } else if (rs == REC_PROGRAM_3) {
        fprintf(stderr, "%s: %s exited with status 3; judging what was recorded up to "
                        "there\n", who, prog);
    } else if (rs > REC_SIGNAL && rs < REC_SIGNAL + 32) {
        fprintf(stderr, "%s: %s died of signal %d; judging what was recorded up to there\n",
                who, prog, rs - REC_SIGNAL);
    } else if (rs != 0) {
        fprintf(stderr, "%s: %s exited with status %d; judging what was recorded up to "
                        "there\n", who, prog, rs);
    }
}
