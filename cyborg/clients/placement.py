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
"""The conductor's client of the Placement API, configured by ``[placement]``.

It speaks one microversion, turns Placement's answers into domain
exceptions, retries what is worth retrying (connection errors and 5xx
with back-off, generation conflicts by reading again) and counts the
requests it sends, so tests and benchmarks can check how chatty a
synchronisation is.
"""

import collections
import threading
import time
from urllib import parse

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log

from cyborg.clients import keystone
import cyborg.conf
from cyborg import exception
from cyborg.i18n import _

LOG = log.getLogger(__name__)
CONF = cyborg.conf.CONF

GROUP = 'placement'

#: 1.26 lets an inventory reserve all of its total (a device under
#: maintenance); it also brings nested providers (1.14), the provider in the
#: answer to POST (1.20) and error codes (1.23).
MICROVERSION = '1.26'

#: 1.38 shows a consumer's type (INSTANCE, MIGRATION) and generation, and
#: lets POST /allocations write a consumer's allocations, empty ones
#: included, guarded by that generation: what taking one provider out of
#: a consumer's allocations needs (``cyborg-manage audit --heal``).
ALLOCATIONS_MICROVERSION = '1.38'
#: The type Placement shows for a consumer written without one, which it
#: refuses as a type, and the last microversion that writes none.
UNKNOWN_CONSUMER_TYPE = 'unknown'
UNTYPED_ALLOCATIONS_MICROVERSION = '1.36'

CUSTOM_PREFIX = 'CUSTOM_'

# Error codes of Placement's 409 answers (placement/errors.py).
CONCURRENT_UPDATE = 'placement.concurrent_update'

# Custom trait and resource class names known to exist in Placement, shared
# by every client of the process: a name is created once, then never asked
# about again. Placement refuses to delete a name still in use, and a name
# deleted behind our back is forgotten when Placement rejects it (400).
_known_names = set()
_known_lock = threading.Lock()


def forget_known_names():
    """Forget which custom names exist, so the next use creates them."""
    with _known_lock:
        _known_names.clear()


def _error_code(resp):
    try:
        return resp.json()['errors'][0].get('code')
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _error_detail(resp):
    try:
        return resp.json()['errors'][0].get('detail', resp.text)
    except (ValueError, KeyError, IndexError, TypeError):
        return resp.text


class PlacementClient:
    """Resource providers, inventories, traits and custom names.

    :param adapter: a keystoneauth adapter; by default one built from
        ``[placement]``.
    :param retry_delay: seconds before the first retry of a connection
        error or 5xx; it doubles at every further retry.
    """

    def __init__(self, adapter=None, retry_delay=0.5):
        self._adapter = adapter or keystone.get_adapter(
            CONF, GROUP, default_microversion=MICROVERSION, raise_exc=False)
        self.retry_delay = retry_delay
        #: Requests sent, by HTTP method, retries included.
        self.requests = collections.Counter()

    @property
    def max_retries(self):
        return CONF.conductor.placement_max_retries

    @property
    def reads(self):
        return self.requests['GET']

    @property
    def writes(self):
        return sum(self.requests.values()) - self.reads

    # --- transport --------------------------------------------------------

    def _request(self, method, url, body=None, microversion=None):
        """Send one request; retry connection errors and 5xx answers.

        :param microversion: another than :data:`MICROVERSION`.

        :raises PlacementUnavailable: every try failed.
        """
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self.retry_delay * 2 ** (attempt - 1))
            self.requests[method] += 1
            try:
                resp = self._adapter.request(
                    url, method, json=body,
                    **({'microversion': microversion} if microversion
                       else {}))
            except ks_exc.ConnectionError as e:
                reason = str(e)
            except ks_exc.ClientException as e:
                # Authentication or endpoint discovery failed: a
                # configuration problem that retrying does not solve.
                raise exception.PlacementUnavailable(reason=str(e))
            else:
                if resp.status_code < 500:
                    return resp
                reason = '%s %s answered %d: %s' % (
                    method, url, resp.status_code, _error_detail(resp))
            LOG.warning('Placement request %(method)s %(url)s failed '
                        '(try %(n)d of %(total)d): %(reason)s',
                        {'method': method, 'url': url, 'n': attempt + 1,
                         'total': self.max_retries + 1, 'reason': reason})
        raise exception.PlacementUnavailable(reason=reason)

    def _failed(self, method, url, resp):
        return exception.PlacementRequestFailed(
            method=method, url=url, status=resp.status_code,
            reason=_error_detail(resp))

    def _get(self, url, microversion=None):
        resp = self._request('GET', url, microversion=microversion)
        if resp.status_code != 200:
            raise self._failed('GET', url, resp)
        return resp.json()

    # --- resource providers -----------------------------------------------

    def get_provider_by_name(self, name):
        """The provider named ``name``, or None."""
        found = self._get('/resource_providers?' +
                          parse.urlencode({'name': name}))
        providers = found['resource_providers']
        return providers[0] if providers else None

    def providers_in_tree(self, uuid):
        """Every provider of the tree that holds ``uuid``, root included."""
        return self._get('/resource_providers?in_tree=%s' %
                         uuid)['resource_providers']

    def root_provider_names(self):
        """The names of the providers at the root of a tree.

        Compute nodes are such roots (and sharing providers, if any).
        """
        return {provider['name'] for provider in
                self._get('/resource_providers')['resource_providers']
                if provider['uuid'] == provider['root_provider_uuid']}

    def providers_with_trait(self, trait):
        """Every provider that has ``trait``, in every tree."""
        return self._get('/resource_providers?' + parse.urlencode(
            {'required': trait}))['resource_providers']

    def create_provider(self, uuid, name, parent_uuid=None):
        """Create a provider; returns it, generation included.

        :raises ResourceProviderExists: the name or uuid is taken.
        """
        url = '/resource_providers'
        body = {'uuid': uuid, 'name': name}
        if parent_uuid:
            body['parent_provider_uuid'] = parent_uuid
        resp = self._request('POST', url, body)
        if resp.status_code == 409:
            raise exception.ResourceProviderExists(
                name=name, uuid=uuid, reason=_error_detail(resp))
        if resp.status_code != 200:
            raise self._failed('POST', url, resp)
        return resp.json()

    def delete_provider(self, uuid):
        """Delete a provider; one already gone is not an error.

        :raises ObjectInUse: it has allocations or children.
        """
        url = '/resource_providers/%s' % uuid
        resp = self._request('DELETE', url)
        if resp.status_code == 409:
            raise exception.ObjectInUse(kind=_('Resource provider'),
                                        uuid=uuid, reason=_error_detail(resp))
        if resp.status_code not in (204, 404):
            raise self._failed('DELETE', url, resp)

    # --- inventories and traits -------------------------------------------

    def get_inventories(self, uuid):
        """(generation, {resource class: inventory}) of a provider."""
        found = self._get('/resource_providers/%s/inventories' % uuid)
        return found['resource_provider_generation'], found['inventories']

    def get_traits(self, uuid):
        """(generation, set of traits) of a provider."""
        found = self._get('/resource_providers/%s/traits' % uuid)
        return found['resource_provider_generation'], set(found['traits'])

    def put_inventories(self, uuid, generation, inventories):
        """Make the provider's inventories exactly ``inventories``.

        :returns: the provider's new generation.
        :raises ObjectInUse: allocations need more than is left.
        """
        for name in inventories:
            self.ensure_resource_class(name)
        return self._put_generation(
            '/resource_providers/%s/inventories' % uuid, uuid, generation,
            'inventories', lambda _current: inventories,
            self.get_inventories)[0]

    def put_traits(self, uuid, generation, traits):
        """Make the provider's traits exactly ``traits``.

        :returns: the provider's new generation.
        """
        for name in traits:
            self.ensure_trait(name)
        return self._put_generation(
            '/resource_providers/%s/traits' % uuid, uuid, generation,
            'traits', lambda _current: sorted(traits), self.get_traits)[0]

    def change_traits(self, uuid, generation, current, add, remove):
        """Add traits to a provider and take others off, keeping the rest.

        A trait that someone else adds or removes meanwhile stays added
        or removed: after a conflict, the change is applied to the
        provider's traits as read again.

        :param current: the provider's traits at ``generation``.
        :returns: (the provider's new generation, its traits now).
        """
        for name in add:
            self.ensure_trait(name)
        return self._put_generation(
            '/resource_providers/%s/traits' % uuid, uuid, generation,
            'traits', lambda traits: sorted((set(traits) - set(remove)) |
                                            set(add)),
            self.get_traits, current)

    def _put_generation(self, url, uuid, generation, key, value, reread,
                        current=None):
        """PUT a whole value guarded by the provider's generation.

        ``value`` makes what is written from what the provider holds
        (``current``, at ``generation``). When the provider changed since
        it was read (409 concurrent update), read it again: stop if it
        already holds what ``value`` makes of it, otherwise write that
        with the new generation, at most ``[conductor]
        placement_max_retries`` times.

        :returns: (the provider's new generation, what it holds now).
        """
        wanted = value(current)
        for _attempt in range(self.max_retries + 1):
            resp = self._request('PUT', url, {
                'resource_provider_generation': generation, key: wanted})
            if resp.status_code == 200:
                return resp.json()['resource_provider_generation'], wanted
            if resp.status_code == 409 and (_error_code(resp) ==
                                            CONCURRENT_UPDATE):
                LOG.info('Resource provider %(uuid)s changed since it was '
                         'read (generation %(gen)s); reading it again',
                         {'uuid': uuid, 'gen': generation})
                generation, current = reread(uuid)
                wanted = value(current)
                if (set(current) == set(wanted) if key == 'traits'
                        else current == wanted):
                    return generation, wanted
                continue
            if resp.status_code == 409:
                raise exception.ObjectInUse(kind=_('Resource provider'),
                                            uuid=uuid,
                                            reason=_error_detail(resp))
            if resp.status_code == 400:
                # Perhaps a custom name was deleted behind our back.
                forget_known_names()
            raise self._failed('PUT', url, resp)
        raise exception.ResourceProviderGenerationConflict(
            uuid=uuid, retries=self.max_retries)

    # --- allocations ------------------------------------------------------

    def provider_allocations(self, uuid):
        """{consumer uuid: {resource class: amount}} held on a provider."""
        found = self._get('/resource_providers/%s/allocations' % uuid)
        return {consumer: held['resources']
                for consumer, held in found['allocations'].items()}

    def consumer_allocations(self, consumer):
        """A consumer's allocations as Placement shows them at 1.38.

        :returns: {'allocations': {rp uuid: {'resources': ...}},
            'consumer_generation', 'consumer_type', 'project_id',
            'user_id'}; ``allocations`` is empty for an unknown consumer.
        """
        return self._get('/allocations/%s' % consumer,
                         microversion=ALLOCATIONS_MICROVERSION)

    def remove_allocation(self, consumer, rp_uuid):
        """Take ``rp_uuid`` out of a consumer's allocations, keeping the rest.

        Written with the consumer's generation: when the consumer's
        allocations changed since they were read, they are read again.

        :returns: whether the consumer had an allocation there.
        :raises ConsumerGenerationConflict: the consumer kept changing,
            ``[conductor] placement_max_retries`` times.
        """
        url = '/allocations'
        for _attempt in range(self.max_retries + 1):
            held = self.consumer_allocations(consumer)
            allocations = held.get('allocations', {})
            if rp_uuid not in allocations:
                return False
            body = {
                'allocations': {rp: {'resources': a['resources']}
                                for rp, a in allocations.items()
                                if rp != rp_uuid},
                'consumer_generation': held['consumer_generation'],
                'project_id': held['project_id'],
                'user_id': held['user_id']}
            microversion = ALLOCATIONS_MICROVERSION
            if held['consumer_type'] == UNKNOWN_CONSUMER_TYPE:
                # Written without a type (as Nova's scheduler writes), and
                # written back the same way: the placeholder is no type.
                microversion = UNTYPED_ALLOCATIONS_MICROVERSION
            else:
                body['consumer_type'] = held['consumer_type']
            resp = self._request('POST', url, {consumer: body},
                                 microversion=microversion)
            if resp.status_code == 204:
                return True
            if resp.status_code != 409 or _error_code(resp) != (
                    CONCURRENT_UPDATE):
                raise self._failed('POST', url, resp)
            LOG.info('Allocations of consumer %s changed since they were '
                     'read; reading them again', consumer)
        raise exception.ConsumerGenerationConflict(
            uuid=consumer, retries=self.max_retries)

    # --- custom names -----------------------------------------------------

    def ensure_resource_class(self, name):
        """Create custom resource class ``name`` unless it is known."""
        self._ensure_name('/resource_classes/', name)

    def ensure_trait(self, name):
        """Create custom trait ``name`` unless it is known."""
        self._ensure_name('/traits/', name)

    def _ensure_name(self, prefix, name):
        # Standard names come with Placement; only custom ones are created.
        if not name.startswith(CUSTOM_PREFIX):
            return
        url = prefix + name
        with _known_lock:
            if url in _known_names:
                return
        resp = self._request('PUT', url)
        if resp.status_code not in (201, 204):
            raise self._failed('PUT', url, resp)
        with _known_lock:
            _known_names.add(url)
