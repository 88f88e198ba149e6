#!/usr/bin/env python3
"""The Debian package. CPack builds it from the build directory into a temp dir (the build tree
gets nothing but the install_manifest.txt that any install writes), then:
- its name and control fields (dpkg-deb -f / -I): faultd_<version>_<arch>.deb, section admin,
  a Depends that covers every library the packaged binaries need, conffiles = every file under
  /etc, maintainer scripts present, executable, `set -e` and valid POSIX sh;
- its contents (dpkg-deb -c): binaries, unit, config, every rule pack and hook of the source
  tree with the right modes, docs, nothing outside /usr and /etc;
- the extracted binaries run: --version, --check-config on the packaged config and rules, and a
  dry-run daemon that finds a fault with the packaged rules and runs the packaged hooks;
- a full dpkg --root cycle in a scratch root (install, reinstall over an edited conffile,
  remove, purge), with the maintainer scripts run chrootless under DPKG_ROOT: the group, the
  enable link, kept conffiles, and purge removing state, links and group, all below the scratch
  root and never on the host. Needs root (dpkg extracts files as root:root); skipped otherwise.
Skipped (exit 0) only when cpack or dpkg-deb are not installed."""
import copy
import glob
import gzip
import os
import re
import shutil
import subprocess
import sys

import harness
from harness import Faultd, free_port, wait_for

L1_LINE = ("[ERROR] AICPU(26533,aicpu_scheduler):2025-02-25-18:40:56.176.403 [silent_check_v3.cc:250]"
           "[ComputeL1Error][tid:26552]SilentCheckV3 ComputeL1Error:val = [nan], max = [nan]\n")


def run(argv, **kw):
    kw.setdefault("timeout", 120)
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def check_run(check, r, message):
    """Checks that a command succeeded; shows its output only when it did not."""
    if not check(r.returncode == 0, message):
        print((r.stdout + r.stderr).strip()[-2000:])
    return r.returncode == 0


def cpack_program(build_dir):
    """The cpack of the CMake that configured the build, else the one on PATH."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_CPACK_COMMAND:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return shutil.which("cpack")


def build_package(args, check, work):
    """Runs cpack; returns the .deb's path or None."""
    build_dir = os.path.dirname(os.path.abspath(args.faultd))
    config = os.path.join(build_dir, "CPackConfig.cmake")
    if not check(os.path.exists(config), "the build has a CPack config (%s)" % config):
        return None
    out = os.path.join(work, "out")
    r = run([cpack_program(build_dir), "-G", "DEB", "-B", out, "--config", config], timeout=300)
    if not check_run(check, r, "cpack -G DEB succeeds"):
        return None
    debs = sorted(glob.glob(os.path.join(out, "*.deb")))
    check(len(debs) == 1, "cpack made exactly one .deb (%s)" % [os.path.basename(d) for d in debs])
    return debs[0] if debs else None


def contents(deb):
    """{path: (mode string, owner)} from dpkg-deb -c, paths without the leading '.'."""
    r = run(["dpkg-deb", "-c", deb])
    entries = {}
    for line in r.stdout.splitlines():
        fields = line.split(None, 5)
        path = fields[5].split(" -> ")[0]
        entries[path[1:] if path.startswith("./") else path] = (fields[0], fields[1])
    return entries


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


def depends_names(depends):
    """Every package name in a Depends field, alternatives included."""
    return {re.split(r"[\s(]", alt.strip())[0] for dep in depends.split(",") for alt in dep.split("|")}


def provided_by(package):
    """The package and what it Provides (libspdlog1.10 provides libspdlog1.10-fmt9)."""
    r = run(["dpkg-query", "-W", "-f", "${Provides}", package])
    return {package} | depends_names(r.stdout) if r.returncode == 0 else {package}


def needed_packages(binary):
    """{soname: owning Debian package} for the binary's direct (NEEDED) libraries, or None when
    readelf or ldd are missing."""
    if not shutil.which("readelf") or not shutil.which("ldd"):
        return None
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", binary]).stdout)
    paths = dict(re.findall(r"^\s*(\S+) => (/\S+)", run(["ldd", binary]).stdout, re.M))
    owners = {}
    for soname in needed:
        path = paths.get(soname)
        owner = None
        for candidate in (path, os.path.realpath(path) if path else None):
            if candidate:
                r = run(["dpkg", "-S", candidate])
                if r.returncode == 0:
                    owner = r.stdout.split(":")[0].strip()
                    break
        owners[soname] = owner
    return owners


def check_control(check, deb, version, arch, entries, root, control_dir):
    check(os.path.basename(deb) == "faultd_%s_%s.deb" % (version, arch),
          "the file is named faultd_<version>_<arch>.deb (%s)" % os.path.basename(deb))
    check(field(deb, "Package") == "faultd", "Package: faultd")
    check(field(deb, "Version") == version, "Version: %s, as faultd --version says" % version)
    check(field(deb, "Architecture") == arch, "Architecture: %s" % arch)
    check(field(deb, "Section") == "admin", "Section: admin")
    check(re.match(r".+ <[^@>]+@[^>]+>$", field(deb, "Maintainer")) is not None,
          "Maintainer is a name and an address (%s)" % field(deb, "Maintainer"))
    description = field(deb, "Description").splitlines()
    check(len(description) > 1 and all(len(line) < 80 for line in description),
          "Description has a synopsis and a long text in lines under 80 columns")
    depends = field(deb, "Depends")
    names = depends_names(depends)
    for package in ("libre2-9", "libyaml-cpp0.7", "libsqlite3-0", "libsystemd0",
                    "libprometheus-cpp-pull1.0", "libprometheus-cpp-core1.0"):
        check(package in names, "Depends names %s" % package)
    check("adduser" in names and "passwd" in names, "Depends names a tool to create the group")
    check("python3" in depends_names(field(deb, "Recommends")),
          "Recommends python3, which the shipped Python hooks run on (%s)" % field(deb, "Recommends"))
    for binary in ("usr/sbin/faultd", "usr/bin/faultctl"):
        owners = needed_packages(os.path.join(root, binary))
        if owners is None:
            print("# readelf or ldd missing: library coverage of Depends not checked")
            break
        for soname, owner in sorted(owners.items()):
            check(owner is not None and provided_by(owner) & names,
                  "Depends covers %s's %s (package %s)" % (binary, soname, owner))

    # Conffiles: exactly the regular files under /etc.
    conffiles_path = os.path.join(control_dir, "conffiles")
    conffiles = []
    if check(os.path.exists(conffiles_path), "the control archive has a conffiles list"):
        with open(conffiles_path) as f:
            conffiles = f.read().split()
    etc_files = sorted(p for p, (mode, _) in entries.items()
                       if p.startswith("/etc/") and mode.startswith("-"))
    check("/etc/faultd/faultd.yaml" in conffiles, "conffiles lists /etc/faultd/faultd.yaml")
    check(sorted(conffiles) == etc_files,
          "conffiles lists every file under /etc and nothing else (%s vs %s)" % (conffiles, etc_files))
    info = run(["dpkg-deb", "-I", deb]).stdout
    for script in ("postinst", "prerm", "postrm"):
        path = os.path.join(control_dir, script)
        if not check(os.path.exists(path), "the control archive has %s" % script):
            continue
        check(re.search(r"\b%s\b" % script, info) is not None, "dpkg-deb -I lists %s" % script)
        check(os.access(path, os.X_OK), "%s is executable" % script)
        with open(path) as f:
            text = f.read()
        check(text.startswith("#!/bin/sh\n"), "%s is a /bin/sh script" % script)
        check(re.search(r"^set -e$", text, re.M) is not None, "%s runs under set -e" % script)
        check_run(check, run(["sh", "-n", path]), "sh -n accepts %s" % script)
        # Lint where the tools exist (shellcheck, devscripts); sh -n above always runs.
        if shutil.which("shellcheck"):
            check_run(check, run(["shellcheck", "-s", "sh", path]), "shellcheck -s sh accepts " + script)
        if shutil.which("checkbashisms"):
            check_run(check, run(["checkbashisms", path]), "checkbashisms finds nothing in " + script)


def check_contents(args, check, entries):
    for path in ("/usr/sbin/faultd", "/usr/bin/faultctl"):
        mode = entries.get(path, ("",))[0]
        check(mode == "-rwxr-xr-x", "%s is in the package, mode 0755 (%s)" % (path, mode))
    unit = entries.get("/usr/lib/systemd/system/faultd.service", ("",))[0]
    check(unit == "-rw-r--r--", "the unit is in /usr/lib/systemd/system, mode 0644 (%s)" % unit)
    check(entries.get("/etc/faultd/faultd.yaml", ("",))[0] == "-rw-r--r--",
          "/etc/faultd/faultd.yaml is in the package")
    src = os.path.join(args.source_dir, "etc", "faultd")
    packs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(src, "rules.d", "*.yaml")))
    shipped = sorted(p.rsplit("/", 1)[1] for p in entries if p.startswith("/etc/faultd/rules.d/")
                     and entries[p][0].startswith("-"))
    check(packs and shipped == packs, "every rule pack of the source tree is shipped (%s)" % shipped)
    # Hooks are shipped executable; their shared library and config files are not.
    hooks_src = os.path.join(src, "hooks")
    for dirpath, _, files in os.walk(hooks_src):
        for name in files:
            if "__pycache__" in dirpath:
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, hooks_src)
            want = "-rwxr-xr-x" if os.access(path, os.X_OK) else "-rw-r--r--"
            mode = entries.get("/etc/faultd/hooks/" + rel, ("",))[0]
            check(mode == want, "hook file %s is shipped with mode %s (%s)" % (rel, want, mode))
    for doc in ("README.md", "hooks.md", "operations.md", "copyright", "changelog.gz"):
        check("/usr/share/doc/faultd/" + doc in entries, "/usr/share/doc/faultd/%s is shipped" % doc)
    for page in ("/usr/share/man/man8/faultd.8", "/usr/share/man/man8/faultctl.8",
                 "/usr/share/man/man5/faultd.yaml.5",
                 "/usr/share/bash-completion/completions/faultctl"):
        check(entries.get(page, ("",))[0] == "-rw-r--r--", "%s is shipped, mode 0644" % page)
    outside = [p for p in entries if not (p.startswith("/usr/") or p.startswith("/etc/")
                                          or p in ("/", "/usr", "/etc"))]
    check(not outside, "nothing is installed outside /usr and /etc (%s)" % outside)
    check(not [p for p in entries if p.startswith("/usr/local")], "nothing goes to /usr/local")
    owners = {owner for _, owner in entries.values()}
    check(owners == {"root/root"}, "every file is owned by root/root (%s)" % owners)


def check_docs(check, root, version):
    """The copyright file in Debian's machine-readable format, and a changelog whose latest
    entry is this version."""
    doc = os.path.join(root, "usr/share/doc/faultd")
    try:
        with open(os.path.join(doc, "copyright")) as f:
            copyright_text = f.read()
    except OSError:
        copyright_text = ""
    check(copyright_text.startswith("Format: https://www.debian.org/doc/packaging-manuals/"
                                    "copyright-format/1.0/") and "\nFiles: *\n" in copyright_text
          and "\nLicense: " in copyright_text,
          "the copyright file is in Debian's machine-readable format with a Files: * paragraph")
    try:
        with gzip.open(os.path.join(doc, "changelog.gz"), "rt") as f:
            first = f.readline()
            text = first + f.read()
    except OSError:
        first = text = ""
    check(re.match(r"faultd \(%s\) \S+; urgency=\w+$" % re.escape(version), first) is not None,
          "the changelog's latest entry is this version (%r)" % first.strip())
    check(re.search(r"^ -- .+ <[^>]+>  \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$",
                    text, re.M) is not None, "the changelog entry has a signed-off trailer line")


def check_container(args, check, entries):
    """The container image build for the DaemonSet, checked for consistency with the package
    and the manifest (building the image needs docker or podman and the network)."""
    path = os.path.join(args.source_dir, "packaging", "container", "Containerfile")
    if not check(os.path.exists(path), "packaging/container/Containerfile exists"):
        return
    with open(path) as f:
        text = f.read()
    bases = re.findall(r"^FROM\s+(\S+)", text, re.M)
    check(bases and all(b.startswith("debian:12") for b in bases),
          "the image builds and runs on Debian 12, whose package names Depends uses (%s)" % bases)
    check("cpack -G DEB" in text and re.search(r"apt-get install .*faultd_\*\.deb", text, re.S),
          "the image installs the package this tree builds, so image and package cannot drift")
    check(re.search(r"apt-get install[^\n]*(\n[^\n]*)*python3", text) is not None,
          "the image has python3 for the hooks")
    entrypoint = re.search(r'^ENTRYPOINT \["([^"]+)"', text, re.M)
    check(entrypoint and entrypoint.group(1) in entries,
          "the entrypoint is a file of the package (%s)" % (entrypoint and entrypoint.group(1)))
    with open(os.path.join(args.source_dir, "etc", "kubernetes", "faultd-daemonset.yaml")) as f:
        daemonset = f.read()
    check("packaging/container/Containerfile" in daemonset,
          "the DaemonSet says which file builds its image")
    for program in re.findall(r"(/usr/s?bin/faultd|/usr/bin/faultctl)\b", daemonset):
        check(program in entries, "the DaemonSet's %s is a file of the package" % program)
    dockerignore = os.path.join(args.source_dir, ".dockerignore")
    check(os.path.exists(dockerignore) and "build" in open(dockerignore).read(),
          ".dockerignore keeps build directories out of the build context")
    engine = shutil.which("docker") or shutil.which("podman")
    if engine is None:
        print("# neither docker nor podman installed: the image itself is not built here")


def check_extracted(args, check, work, root, version, rule_packs):
    faultd = os.path.join(root, "usr/sbin/faultd")
    r = run([faultd, "--version"])
    check(r.returncode == 0 and r.stdout.strip() == "faultd " + version,
          "the packaged faultd runs: %s" % r.stdout.strip())
    with open(os.path.join(root, "usr/lib/systemd/system/faultd.service")) as f:
        unit = f.read()
    check("ExecStart=/usr/sbin/faultd --config /etc/faultd/faultd.yaml" in unit,
          "the packaged unit starts /usr/sbin/faultd on /etc/faultd/faultd.yaml")
    # The packaged default config, with its /etc/faultd paths pointed into the extracted tree.
    with open(os.path.join(root, "etc/faultd/faultd.yaml")) as f:
        text = f.read()
    config = os.path.join(work, "packaged.yaml")
    with open(config, "w") as f:
        f.write(text.replace("/etc/faultd/", os.path.join(root, "etc/faultd") + "/"))
    check(re.search(r"^  dry_run: true$", text, re.M) is not None,
          "the packaged config runs in dry run: a rollout starts there (issue 28, item 6)")
    check(re.search(r"^  - \{ name: kernel, type: kmsg \}$", text, re.M) is not None,
          "the packaged config reads the kernel log (Xid, heartbeat loss) on every vendor")
    r = run([faultd, "--check-config", "--config", config])
    m = re.search(r"ok: (\d+) rule\(s\) from (\d+) file\(s\)", r.stdout + r.stderr)
    check(r.returncode == 0 and m is not None and int(m.group(1)) > 0
          and int(m.group(2)) == rule_packs,
          "--check-config accepts the packaged config with the %d packaged rule pack(s): %s"
          % (rule_packs, (r.stdout + r.stderr).strip()))

    # The packaged daemon, rules and hooks at work, in dry run so the example hooks only say
    # what they would do (they write under /var/lib/faultd otherwise).
    logs = os.path.join(work, "logs", "device-3")
    os.makedirs(logs)
    log = os.path.join(logs, "device-1_1.log")
    with open(log, "w") as f:
        f.write("boot\n")
    hooks = os.path.join(root, "etc/faultd/hooks")
    port = free_port()
    packaged = copy.copy(args)
    packaged.faultd = faultd
    packaged.faultctl = os.path.join(root, "usr/bin/faultctl")
    d = Faultd(packaged, work, f"""
node: package-test
state_dir: {work}/state
metrics: {{ listen: "127.0.0.1:{port}" }}
control: {{ socket: {work}/control.sock, group: "" }}
include: ["{root}/etc/faultd/rules.d/*.yaml"]
sources:
  - {{ name: device-log, paths: ["{work}/logs/device-*/device-*.log"],
      path_fields: 'device-(?P<device>\\d+)/', start_at: end }}
actions:
  isolate:  {{ argv: [{hooks}/isolate-device], timeout: 30s }}
  resume:   {{ argv: [{hooks}/resume-from-checkpoint], timeout: 30s, after: isolate }}
  diagnose: {{ argv: [{hooks}/diagnose-device], timeout: 30s, after: isolate }}
policy: {{ dry_run: true }}
""")
    d.start()
    with open(log, "a") as f:
        f.write(L1_LINE)

    def finished():
        actions = d.ctl_json("events")["actions"]
        done = {a["action"]: a for a in actions if a["status"] not in ("pending", "running")}
        return done if len(done) == 3 else None

    done = wait_for("the three packaged hooks to finish", finished)
    for action in ("isolate", "resume", "diagnose"):
        a = done.get(action, {})
        check(a.get("status") == "success" and "dry run" in a.get("detail", ""),
              "the packaged %s hook ran in dry run (%s: %s)" % (action, a.get("status"),
                                                                a.get("detail", "").strip()))
    check(d.stop() == 0, "the packaged faultd stops cleanly on SIGTERM")


def dpkg_root(root, log, *argv):
    # Chrootless scripts with DPKG_ROOT: the scratch root has no shell or tools of its own.
    # --force-depends: its dpkg database knows none of the libraries (the host has them).
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    env.pop("DPKG_ROOT", None)
    return run(["dpkg", "--root=" + root, "--log=" + log, "--force-script-chrootless",
                "--force-depends"] + list(argv), env=env, stdin=subprocess.DEVNULL)


def maintainer_script(root, control_dir, script, *argv):
    """Runs a maintainer script by hand, in the environment dpkg gives it for --root."""
    env = dict(os.environ, DPKG_ROOT=root, DPKG_MAINTSCRIPT_PACKAGE="faultd",
               DPKG_MAINTSCRIPT_NAME=script)
    return run(["sh", os.path.join(control_dir, script)] + list(argv), env=env)


def group_lines(root):
    try:
        with open(os.path.join(root, "etc/group")) as f:
            return [line for line in f if line.startswith("faultd:")]
    except OSError:
        return []


def host_group():
    return run(["getent", "group", "faultd"]).stdout


def check_dpkg_cycle(check, work, deb, control_dir):
    if os.geteuid() != 0 or not shutil.which("dpkg") or not shutil.which("groupadd"):
        print("# not root, or dpkg/groupadd missing: the dpkg --root install cycle is skipped")
        return
    root = os.path.join(work, "scratch-root")
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "etc"):
        os.makedirs(os.path.join(root, d))
    for name, text in (("var/lib/dpkg/status", ""), ("var/lib/dpkg/available", ""),
                       ("etc/group", "root:x:0:\n"), ("etc/gshadow", "root:*::\n"),
                       ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")):
        with open(os.path.join(root, name), "w") as f:
            f.write(text)
    log = os.path.join(work, "dpkg.log")
    host_before = host_group()
    link = os.path.join(root, "etc/systemd/system/multi-user.target.wants/faultd.service")
    has_helper = shutil.which("deb-systemd-helper") is not None

    installed = dpkg_root(root, log, "-i", deb)
    check_run(check, installed, "dpkg --root -i installs the package")
    check("runs in dry run" in installed.stdout and "'policy.dry_run: false'" in installed.stdout,
          "postinst says the shipped config runs in dry run and how to arm it (%r)"
          % installed.stdout.strip()[-400:])
    status = run(["dpkg", "--root=" + root, "-s", "faultd"]).stdout
    check("Status: install ok installed" in status, "dpkg records faultd as installed")
    check(re.search(r"^ /etc/faultd/faultd.yaml [0-9a-f]{32}$", status, re.M) is not None,
          "dpkg registers /etc/faultd/faultd.yaml as a conffile")
    check(os.access(os.path.join(root, "usr/sbin/faultd"), os.X_OK), "faultd is installed")
    check(len(group_lines(root)) == 1, "postinst created the faultd group (%s)" % group_lines(root))
    if has_helper:
        check(os.path.islink(link), "postinst enabled faultd.service (multi-user.target.wants)")

    # The operator edits the config; the daemon has left state behind.
    config = os.path.join(root, "etc/faultd/faultd.yaml")
    with open(config, "a") as f:
        f.write("# edited by the operator\n")
    state = os.path.join(root, "var/lib/faultd")
    os.makedirs(state)
    with open(os.path.join(state, "state.db"), "w") as f:
        f.write("state")

    check_run(check, dpkg_root(root, log, "-i", deb), "installing again over it works "
              "(prerm upgrade, postinst configure with the old version)")
    with open(config) as f:
        check(f.read().endswith("# edited by the operator\n"), "the operator's edit of a "
              "conffile survives the reinstall, without a prompt")
    check(len(group_lines(root)) == 1, "the group is created once (postinst is idempotent)")

    # Running the scripts again by hand, as dpkg may after an interrupted run.
    for argv in (["postinst", "configure", "0.0.1"], ["prerm", "upgrade", "0.0.2"]):
        check_run(check, maintainer_script(root, control_dir, *argv),
                  "%s %s runs again cleanly" % (argv[0], argv[1]))
    check(len(group_lines(root)) == 1, "still one faultd group")

    check_run(check, dpkg_root(root, log, "-r", "faultd"), "dpkg -r removes the package")
    status = run(["dpkg", "--root=" + root, "-s", "faultd"]).stdout
    check("Status: deinstall ok config-files" in status, "after remove only the conffiles remain")
    check(not os.path.exists(os.path.join(root, "usr/sbin/faultd")), "remove deletes the binary")
    check(os.path.exists(config), "remove keeps the conffiles")
    check(os.path.exists(os.path.join(state, "state.db")), "remove keeps the state")
    check(len(group_lines(root)) == 1, "remove keeps the group")

    check_run(check, dpkg_root(root, log, "-P", "faultd"), "dpkg -P purges the package")
    check(run(["dpkg", "--root=" + root, "-s", "faultd"]).returncode != 0, "purge forgets faultd")
    check(not os.path.exists(config), "purge deletes the conffiles")
    check(not os.path.exists(state), "purge deletes /var/lib/faultd")
    check(not group_lines(root), "purge deletes the faultd group")
    check(not os.path.lexists(link), "purge deletes the enable link")
    check_run(check, maintainer_script(root, control_dir, "postrm", "purge"),
              "postrm purge runs again cleanly")
    check(host_group() == host_before, "the host's groups were never touched")


def package(args, check, work):
    deb = build_package(args, check, work)
    if not deb:
        return
    version = run([args.faultd, "--version"]).stdout.split()[-1]
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    entries = contents(deb)
    root = os.path.join(work, "extracted")
    if not check_run(check, run(["dpkg-deb", "-x", deb, root]), "dpkg-deb -x extracts the package"):
        return
    control_dir = os.path.join(work, "control")
    if not check_run(check, run(["dpkg-deb", "-e", deb, control_dir]),
                     "dpkg-deb -e extracts the control archive"):
        return

    # With `file` at configure time, CPack strips the binaries into faultd-dbgsym.
    if shutil.which("file"):
        ddebs = glob.glob(os.path.join(os.path.dirname(deb), "faultd-dbgsym_*.ddeb"))
        check(len(ddebs) == 1 and field(ddebs[0], "Depends") == "faultd (= %s)" % version,
              "the debug symbols are in faultd-dbgsym, tied to this version")
        for binary in ("usr/sbin/faultd", "usr/bin/faultctl"):
            check(", stripped" in run(["file", "-b", os.path.join(root, binary)]).stdout,
                  "the packaged %s is stripped" % binary)

    check_contents(args, check, entries)
    check_control(check, deb, version, arch, entries, root, control_dir)
    check_docs(check, root, version)
    check_container(args, check, entries)
    packs = len(glob.glob(os.path.join(root, "etc/faultd/rules.d/*.yaml")))
    check_extracted(args, check, work, root, version, packs)
    check_dpkg_cycle(check, work, deb, control_dir)


if __name__ == "__main__":
    missing = [p for p in ("cpack", "dpkg-deb") if not shutil.which(p)]
    if missing:
        print("SKIP: %s not installed; the Debian package is not built or checked" % ", ".join(missing))
        print("0 passed, 0 failed")
        sys.exit(0)
    harness.main(package)
