# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""A service's first state, made once per virtualenv and copied after.

Setting up Keystone (``keystone-manage db_sync``, its keys,
``bootstrap``) or Nova (``nova-manage api_db sync``, its cells, ``db
sync``) runs a command of seconds of CPU a step, and makes the same files
each time from one virtualenv. :func:`copy_into` makes them once, keeps
them in the virtualenv, and copies them into each new state directory:
the tests start a dozen of these services in a run.
"""

import fcntl
import glob
import hashlib
import inspect
import os
import shutil
import tempfile

#: Where a virtualenv keeps what was made from it.
DIRECTORY = 'cyborg-prebuilt'
#: What ``tools/setup-client-venvs.sh`` installed into a virtualenv; it
#: makes the virtualenv again when that changes.
INSTALLED = '.cyborg-clients'


def _key(venv, build):
    """What the files depend on: the virtualenv's packages, ``build``'s code.

    The source of the module that defines ``build``: the configuration
    and the commands it writes and runs are there.
    """
    digest = hashlib.sha256(inspect.getsource(inspect.getmodule(build))
                            .encode())
    try:
        with open(os.path.join(venv, INSTALLED), 'rb') as f:
            digest.update(f.read())
    except FileNotFoundError:
        pass  # a virtualenv made by hand: its code alone keys it
    return digest.hexdigest()[:16]


def copy_into(state, venv, name, build, files):
    """Copy into ``state`` the ``files`` that ``build`` makes.

    ``build(directory)`` sets the service up in ``directory``, a new state
    directory of its own, as it would ``state``; what it makes is kept in
    ``<venv>/cyborg-prebuilt/<name>-<key>``, the key changing with the
    virtualenv's packages and ``build``'s module (a new build removes
    those of other keys). The first caller builds them; other processes
    wait for it (a lock), later ones copy at once.

    :param files: names of files or directories in ``directory``; none
        may name an absolute path of ``directory``, which is gone.
    """
    root = os.path.join(venv, DIRECTORY)
    os.makedirs(root, exist_ok=True)
    built = os.path.join(root, '%s-%s' % (name, _key(venv, build)))
    with open(built + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isdir(built):
            work = tempfile.mkdtemp(prefix='.%s-' % name, dir=root)
            try:
                build(work)
                os.rename(work, built)
            except BaseException:
                shutil.rmtree(work, ignore_errors=True)
                raise
            # What older code or packages made is of no more use.
            for stale in glob.glob(os.path.join(root, name + '-*')):
                if not stale.startswith(built):
                    shutil.rmtree(stale, ignore_errors=True)
    for path in files:
        source = os.path.join(built, path)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(state, path))
        else:
            shutil.copy2(source, os.path.join(state, path))
