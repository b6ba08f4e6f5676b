import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { cgroupFolder, findCgroupHost, parseMountinfo, parseProcCgroup } from "./cgroup-host.js";

const HYBRID_CGROUP = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/\n";
const V2_CGROUP = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-u42.scope\n";
const MOUNTINFO = [
  "30 24 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755",
  "34 30 0:30 / /sys/fs/cgroup/memory rw,relatime shared:12 - cgroup cgroup rw,memory",
  "35 30 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
  "36 30 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate",
  "37 24 0:33 /docker/abc /mnt/with\\040space rw - cgroup2 cgroup2 rw",
].join("\n");

describe("cgroup discovery", () => {
  it("reads /proc/self/cgroup for v1 controllers and the v2 path", () => {
    const hybrid = parseProcCgroup(HYBRID_CGROUP);
    assert.equal(hybrid.get("memory"), "/process_api/abc");
    assert.equal(hybrid.get("pids"), "/");
    assert.equal(hybrid.get("cpuacct"), "/x");
    assert.equal(hybrid.get(""), "/");
    assert.deepEqual([...parseProcCgroup(V2_CGROUP)], [["", "/user.slice/user-1000.slice/user@1000.service/app.slice/run-u42.scope"]]);
  });

  it("finds cgroup mounts in mountinfo, with their controllers and roots", () => {
    const mounts = parseMountinfo(MOUNTINFO);
    assert.deepEqual(
      mounts.map((mount) => [mount.fstype, mount.mountPoint, mount.root, mount.options.includes("memory")]),
      [
        ["cgroup", "/sys/fs/cgroup/memory", "/", true],
        ["cgroup", "/sys/fs/cgroup/pids", "/", false],
        ["cgroup2", "/sys/fs/cgroup/unified", "/", false],
        ["cgroup2", "/mnt/with space", "/docker/abc", false],
      ],
    );
    const [memory, , , nested] = mounts as [NonNullable<(typeof mounts)[0]>, unknown, unknown, NonNullable<(typeof mounts)[0]>];
    assert.equal(cgroupFolder(memory, "/process_api/abc"), "/sys/fs/cgroup/memory/process_api/abc");
    assert.equal(cgroupFolder(nested, "/docker/abc/sub"), "/mnt/with space/sub");
    assert.equal(cgroupFolder(nested, "/docker/abc"), "/mnt/with space");
    assert.equal(cgroupFolder(nested, "/elsewhere"), undefined, "a cgroup outside the mount's root is not visible there");
  });

  it("says why there is no cgroup: v2 without the memory controller delegated, no v1 memory hierarchy", async () => {
    const root = mkdtempSync(join(os.tmpdir(), "reflectkit-cgroup-test-"));
    try {
      mkdirSync(join(root, "proc"));
      mkdirSync(join(root, "unified", "user.slice"), { recursive: true });
      writeFileSync(join(root, "unified", "user.slice", "cgroup.controllers"), "cpu io\n");
      writeFileSync(join(root, "proc", "cgroup"), "0::/user.slice\n");
      writeFileSync(join(root, "proc", "mountinfo"), `36 30 0:32 / ${join(root, "unified")} rw,relatime - cgroup2 cgroup2 rw\n`);
      const found = await findCgroupHost(join(root, "proc"));
      assert.equal(found.host, undefined);
      assert.equal("why" in found && found.why, `v2: the memory controller is not delegated to ${join(root, "unified", "user.slice")}; v1: no memory hierarchy mounted`);
      const unreadable = await findCgroupHost(join(root, "nothing"));
      assert.match(("why" in unreadable && unreadable.why) || "", /cannot read .*nothing\/cgroup/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

});
