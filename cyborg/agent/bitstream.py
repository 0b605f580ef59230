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
"""FPGA bitstreams in Glance: finding, checking and fetching them.

Bitstreams are Glance images tagged ``FPGA`` and described by the image
properties of seed 002: ``bs-name``, ``bs-uuid``, ``vendor``, ``board``,
``shell_id``, ``version``, ``driver``, ``driver_ver``, ``driver_path``,
``topology``, ``region_uuid``, ``function_uuid``, ``function_name``. Ids
are compared as lower-case hexadecimal without dashes, however the image
spells them.

Only images of a trusted owner are ever loaded: Glance's ``owner`` (the
project that uploaded the image) must be one of ``[fpga]
trusted_image_owners``, by default the project of the ``[glance]``
credentials Cyborg looks images up with. Any Glance user may upload an
image tagged ``FPGA`` claiming a function, and FPGAs are shared hardware;
so untrusted images are left out of every search before its candidates
are counted, and one named by id is refused.

Images made for the service Cyborg replaces have no seed-002 metadata:
that service programmed any image named by id, and found images by
function through their ``accel:function_id`` property. Such images of a
trusted owner still program, with a warning that names the metadata they
lack.
"""

import contextlib
import hashlib
import os
import re
import stat
import tempfile

from glanceclient import exc as glance_exc
from keystoneauth1 import exceptions as ks_exc
from oslo_log import log

from cyborg.clients import glance as glance_client
from cyborg.common import placement_names
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _

CONF = cyborg.conf.CONF
LOG = log.getLogger(__name__)

TAG = 'FPGA'
#: The property by which the replaced service found images by function.
LEGACY_FUNCTION_ID = 'accel:function_id'
#: Most candidates an ambiguous search names in its error.
_MAX_NAMED = 5
#: Bytes in the unit of ``[fpga] max_bitstream_size``.
MIB = 1024 * 1024


@contextlib.contextmanager
def _glance_errors():
    """Glance being unreachable or failing is a clear domain error."""
    try:
        yield
    except (glance_exc.CommunicationError, ks_exc.ConnectionError,
            ks_exc.EndpointNotFound, glance_exc.HTTPServiceUnavailable,
            glance_exc.HTTPInternalServerError) as e:
        raise exception.ServiceUnavailable(
            reason=_('Glance cannot be reached: %s') % e) from e
    except (glance_exc.HTTPUnauthorized, ks_exc.Unauthorized,
            ks_exc.MissingAuthPlugin) as e:
        raise exception.ServiceUnavailable(
            reason=_('Glance refuses the credentials of [glance], which '
                     'Cyborg looks bitstreams up with: %s') % e) from e


def trusted_owners():
    """The project ids whose images may be loaded; empty trusts none.

    ``[fpga] trusted_image_owners``, or else the project of the
    ``[glance]`` credentials, asked of Keystone (once per token).
    """
    if CONF.fpga.trusted_image_owners:
        return frozenset(CONF.fpga.trusted_image_owners)
    with _glance_errors():
        try:
            project = glance_client.project_id(CONF)
        except ks_exc.ClientException as e:
            raise exception.ServiceUnavailable(
                reason=_('the project of the [glance] credentials, whose '
                         'images are trusted, cannot be found: %s') % e)
    return frozenset([project] if project else [])


def _trusted(image, owners):
    return bool(image.get('owner')) and image['owner'] in owners


def _untrusted_reason(image, owners):
    return (_('its owner %(owner)s is not a trusted image owner (%(trusted)s'
              '): only images of the projects in [fpga] '
              'trusted_image_owners, by default the project of the [glance] '
              'credentials, are loaded') % {
        'owner': image.get('owner') or _('(none)'),
        'trusted': ', '.join(sorted(owners)) or _('none')})


def find(glance, region, owners, bitstream_id=None, function_id=None,
         function_name=None):
    """The one image to load into ``region``.

    By ``bitstream_id``, or by function (id and/or name) among the active
    images tagged ``FPGA`` made for the region's type: its
    ``region_uuid``, or its vendor and board when the region shows no type.
    When none is, a function id is looked for as the replaced service did:
    among the active images whose ``accel:function_id`` is exactly it.
    Searches see only images whose owner is in ``owners`` (see
    :func:`trusted_owners`): an image of anyone else never competes with,
    or stands in for, the operator's.

    :raises BitstreamNotFound: no such image.
    :raises BitstreamRejected: the image named by id is not of a trusted
        owner.
    :raises BitstreamAmbiguous: several images match; the error names them.
    """
    if bitstream_id:
        with _glance_errors():
            try:
                image = glance.images.get(bitstream_id)
            except glance_exc.HTTPNotFound:
                raise exception.BitstreamNotFound(
                    criteria=_('id %s') % bitstream_id)
        if not _trusted(image, owners):
            raise exception.BitstreamRejected(
                image=image['id'], deployable=region.deployable_name,
                reason=_untrusted_reason(image, owners))
        return image
    if not (function_id or function_name):
        raise exception.InvalidParameterValue(
            name='bitstream', reason=_('give a bitstream id, a function id '
                                       'or a function name'))
    filters = {'tag': [TAG], 'status': 'active'}
    wanted = []
    if function_name:
        filters['function_name'] = function_name
        wanted.append('function_name %s' % function_name)
    with _glance_errors():
        images = [i for i in glance.images.list(filters=filters)
                  if _trusted(i, owners)]
    if function_id:
        # Filtered here: Glance compares property strings exactly, and ids
        # are spelled with or without dashes.
        wanted_id = placement_names.normalize_id(function_id)
        images = [i for i in images if placement_names.normalize_id(
            i.get('function_uuid')) == wanted_id]
        wanted.append('function_uuid %s' % function_id)
    if region.region_type:
        images = [i for i in images if placement_names.normalize_id(
            i.get('region_uuid')) == region.region_type]
        wanted.append('region_uuid %s' % region.region_type)
    else:
        images = [i for i in images if _same(i.get('vendor'), region.vendor)
                  and _same(i.get('board'), region.board)]
        wanted.append('board %s %s' % (region.vendor, region.board))
    criteria = ', '.join(wanted)
    if not images and function_id and not function_name:
        with _glance_errors():
            images = [i for i in glance.images.list(filters={
                LEGACY_FUNCTION_ID: function_id, 'status': 'active'})
                if _trusted(i, owners)]
        criteria += _(', or %(key)s %(value)s') % {
            'key': LEGACY_FUNCTION_ID, 'value': function_id}
    criteria += _(', owned by a trusted project (%s)') % (
        ', '.join(sorted(owners)) or _('none'))
    if not images:
        raise exception.BitstreamNotFound(criteria=criteria)
    if len(images) > 1:
        named = ', '.join('%s (%s)' % (i['id'], i.get('name'))
                          for i in images[:_MAX_NAMED])
        if len(images) > _MAX_NAMED:
            named += _(' and %d more') % (len(images) - _MAX_NAMED)
        raise exception.BitstreamAmbiguous(count=len(images),
                                           criteria=criteria,
                                           candidates=named)
    return images[0]


def _same(a, b):
    """Names equal but for case and punctuation (``PAC-A10``/``pac_a10``)."""
    def norm(text):
        return re.sub(r'[^A-Z0-9]', '', (text or '').upper())
    return bool(norm(a)) and norm(a) == norm(b)


def check(image, region, owners):
    """Refuse an image that cannot be loaded into ``region``.

    The tag, vendor and board that an image lacks are not held against it
    (images made for the replaced service have none); a warning names
    them. Its owner must be in ``owners`` whichever way it was found.

    :raises BitstreamRejected: naming the reason.
    """
    def refuse(reason):
        return exception.BitstreamRejected(
            image=image['id'], deployable=region.deployable_name,
            reason=reason)

    if not _trusted(image, owners):
        raise refuse(_untrusted_reason(image, owners))
    if image.get('status') != 'active':
        raise refuse(_('it is %s, not active') % image.get('status'))
    missing = [] if TAG in (image.get('tags') or []) else [_('tag %s') % TAG]
    for key, card in (('vendor', region.vendor), ('board', region.board)):
        if not image.get(key):
            missing.append(key)
        elif not _same(image[key], card):
            raise refuse(_('it is for %(key)s %(image)s, the card is '
                           '%(card)s') % {'key': key, 'image': image[key],
                                          'card': card})
    shell_id = placement_names.normalize_id(image.get('shell_id'))
    if shell_id and shell_id not in region.shell_ids:
        raise refuse(_('it needs shell %(need)s, the card holds %(has)s')
                     % {'need': image['shell_id'],
                        'has': ', '.join(region.shell_ids) or _('none')})
    region_uuid = placement_names.normalize_id(image.get('region_uuid'))
    if region_uuid and region.region_type and (
            region_uuid != region.region_type):
        raise refuse(_('it is for region type %(need)s, the region is '
                       '%(has)s') % {'need': image['region_uuid'],
                                     'has': region.region_type})
    if not (image.get('os_hash_algo') and image.get('os_hash_value')):
        raise refuse(_('Glance holds no checksum (os_hash_value) for it'))
    limit = CONF.fpga.max_bitstream_size * MIB
    if (image.get('size') or 0) > limit:
        raise refuse(_('it is %(size)d bytes, more than [fpga] '
                       'max_bitstream_size (%(limit)d MiB)') % {
            'size': image['size'], 'limit': CONF.fpga.max_bitstream_size})
    if missing:
        LOG.warning('Bitstream image %(image)s lacks the bitstream metadata '
                    '%(missing)s, so nothing shows it fits %(name)s; it is '
                    'loaded all the same, as the service Cyborg replaces '
                    'did', {'image': image['id'],
                            'missing': ', '.join(missing),
                            'name': region.deployable_name})


def download_dir():
    """``[glance] download_dir``, made the agent's own (mode 0700).

    Created when missing; one of the agent's that others may enter is
    narrowed to 0700, since a bitstream may be a vendor's secret and the
    file is loaded into hardware after it is written.

    :raises ProgrammingFailed: it cannot be made, or another user owns it.
    """
    path = CONF.glance.download_dir
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
        if info.st_uid != os.geteuid():
            raise exception.ProgrammingFailed(
                deployable=path, reason=_(
                    '[glance] download_dir belongs to user %d, not to the '
                    'agent') % info.st_uid)
        if stat.S_IMODE(info.st_mode) & 0o077:
            LOG.warning('Bitstream download directory %(path)s was mode '
                        '%(mode)o; made 0700', {
                            'path': path,
                            'mode': stat.S_IMODE(info.st_mode)})
            os.chmod(path, 0o700)
    except OSError as e:
        raise exception.ProgrammingFailed(
            deployable=path, reason=_(
                '[glance] download_dir cannot be made the agent\'s own: %s')
            % e)
    return path


@contextlib.contextmanager
def download(glance, image, region):
    """Stream a checked image into a private file; remove it afterwards.

    The file is created with mode 0600 in :func:`download_dir`; at most
    ``[fpga] max_bitstream_size`` is read, whatever Glance said the size
    was.

    :raises BitstreamRejected: the data does not match ``os_hash_value``,
        or is too large.
    """
    def refuse(reason):
        return exception.BitstreamRejected(
            image=image['id'], deployable=region.deployable_name,
            reason=reason)

    try:
        hasher = hashlib.new(image['os_hash_algo'])
    except ValueError:
        raise refuse(_('its hash algorithm %s is unknown here')
                     % image['os_hash_algo'])
    limit = CONF.fpga.max_bitstream_size * MIB
    fd, path = tempfile.mkstemp(prefix='cyborg-bitstream-',
                                dir=download_dir())
    try:
        with os.fdopen(fd, 'wb') as f, _glance_errors():
            # Verified here against the image we already hold, rather
            # than by the client with another request for the metadata.
            received = 0
            for chunk in glance.images.data(image['id'], do_checksum=False):
                received += len(chunk)
                if received > limit:
                    raise refuse(_('its data passed [fpga] '
                                   'max_bitstream_size (%d MiB); the '
                                   'download was stopped')
                                 % CONF.fpga.max_bitstream_size)
                hasher.update(chunk)
                f.write(chunk)
        if hasher.hexdigest() != image['os_hash_value']:
            raise refuse(_('the downloaded data does not match its checksum '
                           '(%s)') % image['os_hash_algo'])
        yield path
    finally:
        os.unlink(path)
