package shellcmd_test

import (
	"encoding/json"
	"testing"

	"github.com/streamrules/streamrules"
	"github.com/streamrules/streamrules/seeds"
)

// destructiveJudge is the seeded destructive_shell rule, compiled as the engine runs it.
func destructiveJudge(t testing.TB) *streamrules.Judge {
	t.Helper()
	set, err := seeds.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Rules {
		if r.Name == "destructive_shell" {
			j, err := streamrules.NewJudge(r, seeds.Environments()...)
			if err != nil {
				t.Fatal(err)
			}
			return j
		}
	}
	t.Fatal("no destructive_shell in the seeds")
	return nil
}

// Forms of a forced recursive rm a shell would run, each written to get past a plain
// regex like rm\s+-rf; one shell rule must catch every one.
var forcedRecursiveRM = []string{
	`rm -rf /srv/data`,
	`rm -r -f /srv/data`,
	`rm -fr /srv/data`,
	`rm -Rf /srv/data`,
	`rm -f -R /srv/data`,
	`rm -rfv /srv/data`,
	`rm -v -r --force /srv/data`,
	`rm --recursive --force /srv/data`,
	`rm --force --recursive /srv/data`,
	`rm --rec --for /srv/data`,
	`"rm" -rf /srv/data`,
	`'rm' '-rf' /srv/data`,
	`r"m" -r''f /srv/data`,
	`\rm -rf /srv/data`,
	`/bin/rm -rf /srv/data`,
	`/usr/bin/../bin/rm -rf /srv/data`,
	`$'\x72\x6d' -rf /srv/data`,
	`{rm,-rf,/srv/data}`,
	`sudo rm -rf /srv/data`,
	`sudo -u root -E rm -rf /srv/data`,
	`FOO=1 rm -rf /srv/data`,
	`env -i PATH=/bin rm -rf /srv/data`,
	`nice -n 10 nohup rm -rf /srv/data`,
	`timeout 30 rm -rf /srv/data`,
	`time rm -rf /srv/data`,
	`command rm -rf /srv/data`,
	`exec rm -rf /srv/data`,
	`echo /srv/data | xargs rm -rf`,
	`bash -c 'rm -rf /srv/data'`,
	`sh -ec "cd / && rm -rf srv/data"`,
	`ls && rm -rf /srv/data`,
	`true; rm -rf /srv/data`,
	`false || rm -rf /srv/data`,
	`echo $(rm -rf /srv/data)`,
	"echo `rm -rf /srv/data`",
	`(cd /srv && rm -rf data)`,
	`{ rm -rf /srv/data; }`,
	`if true; then rm -rf /srv/data; fi`,
	`for d in /srv/data; do rm -rf "$d"; done`,
	`while true; do rm -rf /srv/data; break; done`,
	`wipe() { rm -rf /srv/data; }; wipe`,
	`eval 'rm -rf /srv/data'`,
	`find /srv -maxdepth 1 -exec rm -rf {} +`,
	`rm -rf node_modules /srv/data`,
	`rm -rf ./build/../../srv`,
	"rm \\\n -rf /srv/data",
	`git push --force origin main`,
	`git push -f`,
	`git -C /srv/repo push -fu origin main`,
	`git push origin +main`,
	`rm -r /srv/data`, // no terminal: rm -r never prompts, so it deletes as -rf does
	`rm -R ~`,
	`rm --recursive $HOME`,
	`rm -rf ./build /srv/data`,
	`rm -rf -- /srv/data`,
	`rm --no-preserve-root -rf /`,
	`IFS=,; x=rm,-rf,/srv/data; $x`,
	`${RM:-rm} -rf /srv/data`,
	`echo cm0gLXJmIC9zcnYvZGF0YQ== | base64 -d | sh`,
	`bash -c "$(printf 'rm -rf /srv/data')"`,
	`busybox sh -c 'rm -rf /srv/data'`,
	`nohup sh -c 'rm -rf /srv/data' &`,
	`coproc rm -rf /srv/data`,
	`time -p rm -rf /srv/data`,
	`sudo -u root bash -lc 'rm -rf /srv/data'`,
	`xargs -0 rm -rf < files.txt`,
	`git -c alias.pf='push --force' pf origin main`,
	`ln -s /srv/data node_modules`,
}

// Look-alikes: a plain regex on the raw text catches them, a shell never runs them as a
// forced recursive rm (or a forced push).
var lookAlikes = []string{
	`echo "rm -rf /srv/data"`,
	`rm -f /srv/data`,
	`git rm -r -f /srv/data`,
	`ls -rf /srv`,
	"cat <<'EOF'\nrm -rf /srv/data\nEOF",
	"ls # rm -rf /srv/data",
	`grep -r -f patterns.txt /srv`,
	`printf '%s\n' 'rm -rf x'`,
	`rm -rf build dist/ ./node_modules .cache`,
	`rm -rf target/debug`,
	`git push origin main`,
	`git push --force-with-lease origin main`,
	`command -v rm`,
	`man rm # -rf`,
	// The ten ordinary commands a joined line refused: quoted operands holding a flag,
	// an operand after --, dot entries of build output.
	`git commit -m "docs: never git push --force"`,
	`git commit -m 'revert: stop push -f in CI'`,
	`git log --oneline --grep 'push -f'`,
	`git config alias.pf 'push --force'`,
	`git stash push -m 'wip -f flag'`,
	`rm -f 'old -r notes.txt'`,
	`rm -r -- -f`,
	`rm -rf node_modules/.cache`,
	`cd web && rm -rf node_modules/.vite`,
	`rm -rf target/.fingerprint`,
	// Everyday commands.
	`rm notes.txt`,
	`rm -rf ./build`,
	`git push`,
	`git push --force-with-lease`,
	`grep -rn "rm -rf" .`,
	`echo "rm -rf /"`,
}

func TestDestructiveShellCatchesObfuscatedForms(t *testing.T) {
	t.Parallel()
	j := destructiveJudge(t)
	if len(forcedRecursiveRM) < 30 || len(lookAlikes) < 9 {
		t.Fatalf("%d forms and %d look-alikes: the issue asks for at least 30 and 9", len(forcedRecursiveRM), len(lookAlikes))
	}
	for _, cmd := range forcedRecursiveRM {
		// The shell tool takes {"cmd": …} or a bare command line: both are read.
		arg, err := json.Marshal(map[string]string{"cmd": cmd})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{string(arg), cmd} {
			if got := j.Check(in, nil).Status; got != streamrules.StatusViolation {
				t.Errorf("Check(%q) = %s, want violation", in, got)
			}
		}
	}
	fp := 0
	for _, cmd := range lookAlikes {
		arg, err := json.Marshal(map[string]string{"cmd": cmd})
		if err != nil {
			t.Fatal(err)
		}
		if got := j.Check(string(arg), nil).Status; got != streamrules.StatusPass {
			fp++
			t.Errorf("Check(%q) = %s, want pass (a false positive)", arg, got)
		}
	}
	if fp != 0 {
		t.Errorf("%d false positives of %d look-alikes", fp, len(lookAlikes))
	}
}
